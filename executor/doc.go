// Package executor is the home of the ready-made executor binary
// (executor/cmd/shardjob-executor) and its handlers: the demo handlers
// (executor/demo) and the built-in http, sql and shell handlers (executor/builtin).
// A business service that wants its own handlers embeds the SDK (sdk/)
// instead.
package executor
