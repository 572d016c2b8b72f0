// faultpub is a fault trial's publisher written with nats.go (tests/.../JetStream/Cluster/Faults): <loops>
// goroutines on one connection each publish unique payloads "<prefix><loop>-<n>" to <subject>.<prefix's first
// character>, each with its payload as Nats-Msg-Id, and retry a publish until it is acknowledged (a duplicate
// answer names the stored sequence too). Every acknowledgement is printed as "A <payload> <seq>" the moment it
// arrives (after "READY", once connected). The connection reconnects forever (nats.go 1.22 cannot ignore the servers it learns of, so it may
// move to another one).
// A line "STOP" on stdin stops new publishes; those in flight are retried until acknowledged, then it prints
// "DONE <errors>" and exits 0. Built offline against Debian's golang-github-nats-io-go-nats-dev
// (GO111MODULE=off GOPATH=/usr/share/gocode).
//
// Usage: faultpub <url> <subject> <prefix> <loops>
package main

import (
	"bufio"
	"errors"
	"fmt"
	neturl "net/url"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: faultpub <url> <subject> <prefix> <loops>")
		os.Exit(2)
	}
	url, subject, prefix := os.Args[1], os.Args[2]+"."+os.Args[3][:1], os.Args[3]
	loops, _ := strconv.Atoi(os.Args[4])
	options := []nats.Option{nats.MaxReconnects(-1), nats.ReconnectWait(100 * time.Millisecond), nats.Timeout(30 * time.Second)}
	// The URL's credentials go for every server: nats.go 1.22 would send none to the servers it learns from INFO.
	if parsed, err := neturl.Parse(url); err == nil && parsed.User != nil {
		password, _ := parsed.User.Password()
		options = append(options, nats.UserInfo(parsed.User.Username(), password))
	}
	nc, err := nats.Connect(url, options...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "connect: %v\n", err)
		os.Exit(1)
	}
	js, err := nc.JetStream()
	if err != nil {
		fmt.Fprintf(os.Stderr, "jetstream: %v\n", err)
		os.Exit(1)
	}
	var out sync.Mutex
	writer := bufio.NewWriter(os.Stdout)
	ack := func(payload string, seq uint64) {
		out.Lock()
		fmt.Fprintf(writer, "A %s %d\n", payload, seq)
		writer.Flush()
		out.Unlock()
	}
	fmt.Fprintln(writer, "READY")
	writer.Flush()
	var stopping atomic.Bool
	var errorCount atomic.Int64
	var wg sync.WaitGroup
	for loop := 0; loop < loops; loop++ {
		wg.Add(1)
		go func(loop int) {
			defer wg.Done()
			for n := 0; !stopping.Load(); n++ {
				payload := fmt.Sprintf("%s%d-%d", prefix, loop, n)
				for {
					pa, err := js.Publish(subject, []byte(payload), nats.MsgId(payload), nats.AckWait(2*time.Second))
					if err == nil {
						ack(payload, pa.Sequence)
						break
					}
					errorCount.Add(1)
					// Nobody answers while there is no leader, or the connection is down: do not spin.
					if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrConnectionClosed) || !nc.IsConnected() {
						time.Sleep(50 * time.Millisecond)
					}
				}
			}
		}(loop)
	}
	stdin := bufio.NewScanner(os.Stdin)
	for stdin.Scan() && stdin.Text() != "STOP" {
	}
	stopping.Store(true)
	wg.Wait()
	out.Lock()
	fmt.Fprintf(writer, "DONE %d\n", errorCount.Load())
	writer.Flush()
	out.Unlock()
	nc.Close()
}
