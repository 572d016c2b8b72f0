// jspush reads a stream the way most nats.go users do: js.Subscribe with a callback, an ephemeral push
// consumer with ack none, no flow control, nats.go's default pending limits. It prints the count and
// exits 0 once every message arrived in stream order; any asynchronous error (a slow consumer on
// either side), a disconnect or a timeout fails it. Built offline against Debian's
// golang-github-nats-io-go-nats-dev (GO111MODULE=off GOPATH=/usr/share/gocode).
//
// Usage: jspush <url> <subject> <count>
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
)

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 4 {
		fail("usage: jspush <url> <subject> <count>")
	}
	count, _ := strconv.ParseUint(os.Args[3], 10, 64)
	problems := make(chan string, 16)
	report := func(s string) {
		select {
		case problems <- s:
		default:
		}
	}
	nc, err := nats.Connect(os.Args[1], nats.NoReconnect(),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { report("async error: " + err.Error()) }),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { report(fmt.Sprintf("disconnected: %v", err)) }))
	if err != nil {
		fail("connect: %v", err)
	}
	defer nc.Close()
	js, err := nc.JetStream()
	if err != nil {
		fail("jetstream: %v", err)
	}
	done := make(chan struct{})
	var got uint64
	start := time.Now()
	_, err = js.Subscribe(os.Args[2], func(m *nats.Msg) {
		meta, err := m.Metadata()
		if err != nil {
			report("metadata: " + err.Error())
			return
		}
		got++
		if meta.Sequence.Stream != got {
			report(fmt.Sprintf("message %d has stream sequence %d", got, meta.Sequence.Stream))
		}
		if got == count {
			close(done)
		}
	}, nats.AckNone(), nats.DeliverAll())
	if err != nil {
		fail("subscribe: %v", err)
	}
	select {
	case <-done:
		elapsed := time.Since(start)
		fmt.Printf("%d msgs in %.2fs = %.0f msg/s\n", count, elapsed.Seconds(), float64(count)/elapsed.Seconds())
	case p := <-problems:
		fail("%s (after %d of %d)", p, got, count)
	case <-time.After(4 * time.Minute):
		fail("timed out after %d of %d", got, count)
	}
}
