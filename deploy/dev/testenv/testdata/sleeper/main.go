// Command sleeper is a tiny program for the tests of package testenv: it
// prints its argument and "ready", then waits for SIGTERM and exits 0.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	fmt.Println("arg:", os.Args[1:], "env:", os.Getenv("SLEEPER_GREETING"))
	fmt.Println("ready")
	<-sig
	fmt.Fprintln(os.Stderr, "got SIGTERM, bye")
}
