// jsdurable reads a stream through an existing durable push consumer with explicit acks, the way a nats.go
// service does: js.Subscribe bound to it (nats.Bind) with nats.ManualAck, each message acknowledged with
// AckSync (the server confirms the ack), each shown under its stored subject. It prints "got <count>" and exits 0 once every message
// arrived in stream order; an asynchronous error, a disconnect, a failed ack or a timeout fails it.
// Built offline against Debian's golang-github-nats-io-go-nats-dev (GO111MODULE=off GOPATH=/usr/share/gocode).
//
// Usage: jsdurable <url> <stream> <durable> <subject> <count>
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
	if len(os.Args) != 6 {
		fail("usage: jsdurable <url> <stream> <durable> <subject> <count>")
	}
	count, _ := strconv.ParseUint(os.Args[5], 10, 64)
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
	js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
	if err != nil {
		fail("jetstream: %v", err)
	}
	done := make(chan struct{})
	var got uint64
	_, err = js.Subscribe(os.Args[4], func(m *nats.Msg) {
		meta, err := m.Metadata()
		if err != nil {
			report("metadata: " + err.Error())
			return
		}
		if meta.Sequence.Stream != got+1 {
			report(fmt.Sprintf("message %d has stream sequence %d", got+1, meta.Sequence.Stream))
			return
		}
		if m.Subject != os.Args[4] {
			report(fmt.Sprintf("message %d shown on %q", got+1, m.Subject))
			return
		}
		if err := m.AckSync(nats.AckWait(10 * time.Second)); err != nil {
			report(fmt.Sprintf("ack of %d: %v", got+1, err))
			return
		}
		got++
		if got == count {
			close(done)
		}
	}, nats.Bind(os.Args[2], os.Args[3]), nats.ManualAck())
	if err != nil {
		fail("subscribe: %v", err)
	}
	select {
	case <-done:
		fmt.Printf("got %d\n", count)
	case p := <-problems:
		fail("%s (after %d of %d)", p, got, count)
	case <-time.After(2 * time.Minute):
		fail("timed out after %d of %d", got, count)
	}
}
