// Command xxljob-goexec runs the test executor of package goexec (an
// executor that behaves like xxl-job-executor-go) as a process of its own,
// for the admin's real-process tests: it listens on 127.0.0.1, registers
// with the admin every -register-every, prints "listening at <url>" and
// stops on SIGTERM or SIGINT.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/shardjob/shardjob/admin/xxljob/internal/goexec"
)

func main() {
	admin := flag.String("admin", "", "the admin's base URL")
	app := flag.String("app", "", "the appname")
	token := flag.String("token", "", "the access token")
	work := flag.Duration("work", 2*time.Second, "how long handler \"work\" runs")
	every := flag.Duration("register-every", 20*time.Second, "registration interval")
	flag.Parse()
	if err := run(*admin, *app, *token, *work, *every); err != nil {
		fmt.Fprintln(os.Stderr, "xxljob-goexec:", err)
		os.Exit(1)
	}
}

func run(admin, app, token string, work, every time.Duration) error {
	if admin == "" || app == "" || token == "" {
		return errors.New("-admin, -app and -token are required")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := "http://" + ln.Addr().String() + "/"
	e := goexec.New(goexec.Config{AdminURL: admin, App: app, Token: token, Address: addr, Work: work, Log: os.Stdout})
	srv := &http.Server{Handler: e, ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Println("listening at", addr)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	registered := make(chan struct{})
	go func() {
		e.Run(ctx, every)
		close(registered)
	}()
	select {
	case <-ctx.Done():
	case err := <-served:
		return err
	}
	<-registered
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	e.Close()
	return nil
}
