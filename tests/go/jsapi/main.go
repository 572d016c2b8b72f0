// jsapi uses JetStream the way a nats.go application does, through whatever server it is connected to (in the
// tests, a server without JetStream of its own in a cluster whose other servers run it): account info, stream
// create (retried while the cluster's meta group has no leader), publishes with acks, a pull durable fetched and
// acknowledged, an ordered consumer and a push durable with AckSync, each reading the stream in order.
// Built offline like fastpub (GO111MODULE=off GOPATH=/usr/share/gocode).
// Exit 0 and "PASS" when every step held; otherwise a line on stderr says what failed.
//
// Usage: jsapi <url> <user> <password> <stream> <replicas>
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
)

const count = 20

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 6 {
		fail("usage: jsapi <url> <user> <password> <stream> <replicas>")
	}
	stream := os.Args[4]
	replicas, _ := strconv.Atoi(os.Args[5])
	subject := stream + ".new"
	nc, err := nats.Connect(os.Args[1], nats.UserInfo(os.Args[2], os.Args[3]), nats.Timeout(10*time.Second))
	if err != nil {
		fail("connect: %v", err)
	}
	defer nc.Close()
	js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
	if err != nil {
		fail("jetstream: %v", err)
	}

	// Both retried while the cluster's meta group has no leader yet (nobody answers then).
	deadline := time.Now().Add(2 * time.Minute)
	var before *nats.AccountInfo
	for {
		before, err = js.AccountInfo()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			fail("account info: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for {
		_, err = js.AddStream(&nats.StreamConfig{Name: stream, Subjects: []string{stream + ".>"}, Replicas: replicas})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			fail("add stream: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for i := 1; i <= count; i++ {
		ack, err := js.Publish(subject, []byte(fmt.Sprintf("m%d", i)))
		if err != nil {
			fail("publish %d: %v", i, err)
		}
		if ack.Stream != stream || ack.Sequence != uint64(i) {
			fail("publish %d acknowledged as %s/%d", i, ack.Stream, ack.Sequence)
		}
	}
	after, err := js.AccountInfo()
	if err != nil || after.Streams != before.Streams+1 {
		fail("account info after create: %+v %v (before %d streams)", after, err, before.Streams)
	}

	pull, err := js.PullSubscribe(subject, "GOPULL", nats.BindStream(stream))
	if err != nil {
		fail("pull subscribe: %v", err)
	}
	for got := 0; got < count; {
		msgs, err := pull.Fetch(count-got, nats.MaxWait(10*time.Second))
		if err != nil {
			fail("fetch after %d: %v", got, err)
		}
		for _, m := range msgs {
			got++
			if string(m.Data) != fmt.Sprintf("m%d", got) || m.Subject != subject {
				fail("fetched %q on %s as message %d", m.Data, m.Subject, got)
			}
			if err := m.AckSync(); err != nil {
				fail("ack of fetched %d: %v", got, err)
			}
		}
	}
	info, err := pull.ConsumerInfo()
	if err != nil || info.AckFloor.Stream != count {
		fail("pull consumer info: %+v %v", info, err)
	}

	readInOrder("ordered", false, js, subject, nats.OrderedConsumer())
	readInOrder("push durable", true, js, subject, nats.Durable("GOPUSH"), nats.ManualAck(), nats.AckExplicit())
	fmt.Println("PASS")
}

// readInOrder subscribes with opts and expects m1..m20 in order, each acknowledged with AckSync when ack is set.
func readInOrder(what string, ack bool, js nats.JetStreamContext, subject string, opts ...nats.SubOpt) {
	problems := make(chan string, 1)
	done := make(chan struct{})
	got := 0
	sub, err := js.Subscribe(subject, func(m *nats.Msg) {
		if got >= count {
			return
		}
		if string(m.Data) != fmt.Sprintf("m%d", got+1) || m.Subject != subject {
			select {
			case problems <- fmt.Sprintf("%s: message %d is %q on %s", what, got+1, m.Data, m.Subject):
			default:
			}
			return
		}
		if ack {
			if err := m.AckSync(); err != nil {
				select {
				case problems <- fmt.Sprintf("%s: ack of %d: %v", what, got+1, err):
				default:
				}
				return
			}
		}
		got++
		if got == count {
			close(done)
		}
	}, opts...)
	if err != nil {
		fail("%s subscribe: %v", what, err)
	}
	defer sub.Unsubscribe()
	select {
	case <-done:
	case p := <-problems:
		fail("%s", p)
	case <-time.After(time.Minute):
		fail("%s: got %d of %d", what, got, count)
	}
}
