// r3log creates an R3 file stream on a JetStream cluster and publishes to it with nats.go PublishAsync
// (256 in flight), for scripts/r3-log-probe.sh: how large the stream's RAFT log grows on disk and in memory.
// Built offline against Debian's golang-github-nats-io-go-nats-dev (GO111MODULE=off GOPATH=/usr/share/gocode).
//
// Usage: r3log <url> <stream> <count> <payload size>
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
	if len(os.Args) != 5 {
		fail("usage: r3log <url> <stream> <count> <payload size>")
	}
	url, stream := os.Args[1], os.Args[2]
	count, _ := strconv.Atoi(os.Args[3])
	size, _ := strconv.Atoi(os.Args[4])
	// The servers may still be starting: retry the connect for a minute.
	var nc *nats.Conn
	var err error
	for attempt := 0; ; attempt++ {
		if nc, err = nats.Connect(url, nats.UserInfo("app", "pass"), nats.MaxReconnects(-1)); err == nil {
			break
		}
		if attempt >= 120 {
			fail("connect: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	defer nc.Close()
	js, err := nc.JetStream(nats.PublishAsyncMaxPending(256))
	if err != nil {
		fail("jetstream: %v", err)
	}
	// The meta group elects its leader after the routes are up: retry the create until it answers.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, err = js.AddStream(&nats.StreamConfig{Name: stream, Subjects: []string{stream + ".>"}, Storage: nats.FileStorage, Replicas: 3})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			fail("add stream: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	payload := make([]byte, size)
	subject := stream + ".x"
	start := time.Now()
	for i := 0; i < count; i++ {
		if _, err := js.PublishAsync(subject, payload, nats.StallWait(30*time.Second)); err != nil {
			fail("publish %d: %v", i, err)
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(30 * time.Minute):
		fail("acks did not arrive")
	}
	el := time.Since(start)
	si, err := js.StreamInfo(stream)
	if err != nil {
		fail("stream info: %v", err)
	}
	if si.State.Msgs != uint64(count) {
		fail("stream holds %d messages, expected %d", si.State.Msgs, count)
	}
	fmt.Printf("published %d x %d B in %.1f s: %.0f msg/s\n", count, size, el.Seconds(), float64(count)/el.Seconds())
}
