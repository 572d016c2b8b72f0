// jsscale drives the file-stream scale measurement in scripts/js-scale-probe.sh with nats.go, the
// same way against Go's server and ours. Built offline against Debian's golang-github-nats-io-go-nats-dev
// (GO111MODULE=off GOPATH=/usr/share/gocode).
//
//	jsscale publish <url> <stream> <count> <size> <subjects> [<replicas>]
//	                                                         file stream "<stream>" on <stream>.> (R1 unless told), PublishAsync (256 in flight,
//	                                                         30 s stall wait: the 200 ms default trips on a JIT warm-up and on an R3 election)
//	jsscale info <url> <stream>                              retries until $JS.API.STREAM.INFO answers; prints unix ns of the answer
//	jsscale ready <url> -                                    retries until $JS.API.INFO answers
//	jsscale consume <url> <stream> <count>                   durable pull consumer, fetch 1000, ack none
//	jsscale streams <url> <prefix> <streams> <count> <size>  <streams> file streams "<prefix>N" with <count> messages each (synchronous publish)
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

func num(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		fail("not a number: %s", s)
	}
	return n
}

func main() {
	if len(os.Args) < 4 {
		fail("usage: jsscale publish|info|consume <url> <stream> ...")
	}
	url, stream := os.Args[2], os.Args[3]
	switch os.Args[1] {
	case "publish":
		replicas := 1
		if len(os.Args) > 7 {
			replicas = num(os.Args[7])
		}
		publish(url, stream, num(os.Args[4]), num(os.Args[5]), num(os.Args[6]), replicas)
	case "info":
		info(url, stream)
	case "ready":
		ready(url)
	case "consume":
		consume(url, stream, num(os.Args[4]))
	case "filtered":
		filtered(url, stream, os.Args[4], num(os.Args[5]), num(os.Args[6]))
	case "streams":
		streams(url, stream, num(os.Args[4]), num(os.Args[5]), num(os.Args[6]))
	default:
		fail("unknown mode %s", os.Args[1])
	}
}

// connect retries for a minute: the probes start the servers just before.
func connect(url string) (*nats.Conn, nats.JetStreamContext) {
	var nc *nats.Conn
	var err error
	for attempt := 0; ; attempt++ {
		if nc, err = nats.Connect(url, nats.NoReconnect()); err == nil {
			break
		}
		if attempt >= 120 {
			fail("connect: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	js, err := nc.JetStream(nats.PublishAsyncMaxPending(256))
	if err != nil {
		fail("jetstream: %v", err)
	}
	return nc, js
}

func publish(url, stream string, count, size, subjects, replicas int) {
	nc, js := connect(url)
	defer nc.Close()
	// A cluster's meta group elects its leader after the routes are up: retry the create until it answers.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, err := js.AddStream(&nats.StreamConfig{Name: stream, Subjects: []string{stream + ".>"}, Storage: nats.FileStorage, Replicas: replicas})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			fail("add stream: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	names := make([]string, subjects)
	for i := range names {
		names[i] = fmt.Sprintf("%s.%d", stream, i)
	}
	payload := make([]byte, size)
	start := time.Now()
	for i := 0; i < count; i++ {
		if _, err := js.PublishAsync(names[i%subjects], payload, nats.StallWait(30*time.Second)); err != nil {
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
	fmt.Printf("published %d in %.2f s: %.0f msg/s\n", count, el.Seconds(), float64(count)/el.Seconds())
}

func info(url, stream string) {
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		nc, err := nats.Connect(url, nats.NoReconnect())
		if err != nil {
			time.Sleep(2 * time.Millisecond)
			continue
		}
		js, _ := nc.JetStream()
		si, err := js.StreamInfo(stream, nats.MaxWait(2*time.Second))
		nc.Close()
		if err != nil {
			time.Sleep(2 * time.Millisecond)
			continue
		}
		fmt.Printf("%d %d\n", time.Now().UnixNano(), si.State.Msgs)
		return
	}
	fail("no stream info within 5 minutes")
}

func ready(url string) {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if nc, err := nats.Connect(url, nats.NoReconnect()); err == nil {
			js, _ := nc.JetStream()
			_, err = js.AccountInfo(nats.MaxWait(2 * time.Second))
			nc.Close()
			if err == nil {
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	fail("server not ready within a minute")
}

func consume(url, stream string, count int) {
	nc, js := connect(url)
	defer nc.Close()
	sub, err := js.PullSubscribe(stream+".>", "scale", nats.AckNone())
	if err != nil {
		fail("pull subscribe: %v", err)
	}
	start := time.Now()
	got := 0
	for got < count {
		msgs, err := sub.Fetch(1000, nats.MaxWait(10*time.Second))
		if err != nil {
			fail("fetch after %d: %v", got, err)
		}
		got += len(msgs)
	}
	el := time.Since(start)
	fmt.Printf("consumed %d in %.2f s: %.0f msg/s\n", got, el.Seconds(), float64(got)/el.Seconds())
}

// filtered reads every message of one filter with a durable pull consumer (ack none) in batches of
// batch: each fetch makes the server count the consumer's pending messages for that filter.
func filtered(url, stream, filter string, count, batch int) {
	nc, js := connect(url)
	defer nc.Close()
	sub, err := js.PullSubscribe(filter, "filtered", nats.AckNone())
	if err != nil {
		fail("pull subscribe: %v", err)
	}
	start := time.Now()
	got := 0
	for got < count {
		msgs, err := sub.Fetch(batch, nats.MaxWait(30*time.Second))
		if err != nil {
			fail("fetch after %d: %v", got, err)
		}
		got += len(msgs)
	}
	el := time.Since(start)
	fmt.Printf("consumed %d in %.3f s: %.0f msg/s\n", got, el.Seconds(), float64(got)/el.Seconds())
}

func streams(url, prefix string, streams, count, size int) {
	nc, js := connect(url)
	defer nc.Close()
	payload := make([]byte, size)
	for s := 0; s < streams; s++ {
		name := fmt.Sprintf("%s%d", prefix, s)
		if _, err := js.AddStream(&nats.StreamConfig{Name: name, Subjects: []string{name + ".>"}, Storage: nats.FileStorage}); err != nil {
			fail("add stream %s: %v", name, err)
		}
		for i := 0; i < count; i++ {
			if _, err := js.Publish(name+".x", payload); err != nil {
				fail("publish %s %d: %v", name, i, err)
			}
		}
	}
	fmt.Printf("streams %d x %d messages of %d B\n", streams, count, size)
}
