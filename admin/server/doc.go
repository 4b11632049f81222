// Package server assembles one admin replica: platform database (migrated on
// start), leader election (ZooKeeper, or the in-process coordinator in
// standalone mode), the leader's scheduler, and the HTTP API and console.
//
// Its Config is made of the configs of those parts (scheduler.Config,
// watchdog.Config, ...) plus the replica's own settings; New fills in what
// the parts share with the replica (ID, protocol.Timing, logger, clock).
//
// Serve blocks until its context ends, then shuts down in order: stop taking
// requests, stop leading, close the elector and the database. Every
// background loop it runs follows one start/stop contract
// (admin/internal/loops), so none outlives Serve. Configuration problems
// (unreachable database, bad ZooKeeper address, port taken) come back as
// one-line errors that name the setting.
package server
