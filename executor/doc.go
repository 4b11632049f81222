// Package executor is the home of the ready-made executor binary
// (executor/cmd/shardjob-executor) and its handlers: the demo handlers
// (executor/demo) today, the built-in http, sql and shell handlers later.
// A business service that wants its own handlers embeds the SDK (sdk/)
// instead.
package executor
