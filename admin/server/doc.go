// Package server assembles one admin replica: platform database (migrated on
// start), leader election (ZooKeeper, or the in-process coordinator in
// standalone mode), the leader's scheduler, and the HTTP API and console.
//
// Run blocks until its context ends, then shuts down in order: stop taking
// requests, stop leading, close the elector and the database. Configuration
// problems (unreachable database, bad ZooKeeper address, port taken) come
// back as one-line errors that name the setting.
package server
