// jspush reads a stream through a push consumer the way nats.go users do, in one of two shapes:
//
//	jspush <url> <subject> <count>
//	    an ephemeral consumer with ack none, no flow control and nats.go's default pending limits (the shape
//	    most users run, and the one that finds a server overrunning its reader);
//	jspush <url> <subject> <count> <stream> <durable>
//	    bound (nats.Bind) to an existing durable with nats.ManualAck, each message acknowledged with AckSync
//	    (the server confirms the ack) and checked to be shown under its stored subject.
//
// Every message must arrive in stream order. It prints "<count> msgs in <s>s = <rate> msg/s" and exits 0 once
// all arrived; an asynchronous error (a slow consumer on either side), a disconnect, a failed ack or a timeout
// fails it. Built offline against Debian's golang-github-nats-io-go-nats-dev (GO111MODULE=off
// GOPATH=/usr/share/gocode).
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
	if len(os.Args) != 4 && len(os.Args) != 6 {
		fail("usage: jspush <url> <subject> <count> [<stream> <durable>]")
	}
	subject := os.Args[2]
	count, _ := strconv.ParseUint(os.Args[3], 10, 64)
	bound := len(os.Args) == 6
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
	options := []nats.SubOpt{nats.AckNone(), nats.DeliverAll()}
	if bound {
		options = []nats.SubOpt{nats.Bind(os.Args[4], os.Args[5]), nats.ManualAck()}
	}
	done := make(chan struct{})
	var got uint64
	start := time.Now()
	_, err = js.Subscribe(subject, func(m *nats.Msg) {
		meta, err := m.Metadata()
		if err != nil {
			report("metadata: " + err.Error())
			return
		}
		if meta.Sequence.Stream != got+1 {
			report(fmt.Sprintf("message %d has stream sequence %d", got+1, meta.Sequence.Stream))
			return
		}
		if bound {
			if m.Subject != subject {
				report(fmt.Sprintf("message %d shown on %q", got+1, m.Subject))
				return
			}
			if err := m.AckSync(nats.AckWait(10 * time.Second)); err != nil {
				report(fmt.Sprintf("ack of %d: %v", got+1, err))
				return
			}
		}
		got++
		if got == count {
			close(done)
		}
	}, options...)
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
