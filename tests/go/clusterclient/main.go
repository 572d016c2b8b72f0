// clusterclient drives nats.go (the Go project's own client) across a cluster: subscribers on the first
// server, publishers on the last, queue members on every server. Built offline like fastpub
// (GO111MODULE=off GOPATH=/usr/share/gocode). Run by Routes/ClusterClientTests.cs, which talks to it over
// stdin/stdout at two points:
//   "CHECK <gone> <kept>"  it has unsubscribed <gone> and still holds <kept>; the test checks every other
//                          server's route interest and answers a line on stdin.
//   "KILL"                 its failover connection (first server only) is subscribed; the test kills the first
//                          server and answers; the client must fail over to a server it learnt from connect_urls.
// Exit 0 and "PASS" when every check held; otherwise a line on stderr says what failed.
//
// Usage: clusterclient <url> <url> [<url> ...]
package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

const timeout = 30 * time.Second

var stdin = bufio.NewReader(os.Stdin)

// Set when the servers are a hub and its leaf (CLUSTERCLIENT_LEAF=1) rather than one cluster.
var leaf = os.Getenv("CLUSTERCLIENT_LEAF") != ""

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
	os.Exit(1)
}

func connect(url string, opts ...nats.Option) *nats.Conn {
	nc, err := nats.Connect(url, append([]nats.Option{nats.Timeout(10 * time.Second)}, opts...)...)
	if err != nil {
		fail("connect %s: %v", url, err)
	}
	return nc
}

// probe publishes on subject until ch sees it: the subscription's interest has crossed the routes.
func probe(pub *nats.Conn, subject string, ch chan *nats.Msg) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if err := pub.Publish(subject, []byte("probe")); err != nil {
			fail("probe publish: %v", err)
		}
		pub.Flush()
		select {
		case m := <-ch:
			if m.Subject == subject {
				return
			}
		case <-time.After(200 * time.Millisecond):
		}
	}
	fail("interest in %s never crossed the route", subject)
}

// next is the next message on ch that is not a probe.
func next(ch chan *nats.Msg, what string) *nats.Msg {
	deadline := time.After(timeout)
	for {
		select {
		case m := <-ch:
			if string(m.Data) != "probe" {
				return m
			}
		case <-deadline:
			fail("%s: nothing arrived", what)
		}
	}
}

func expect(m *nats.Msg, subject, data string) {
	if m.Subject != subject || string(m.Data) != data {
		fail("expected %s %q, got %s %q", subject, data, m.Subject, string(m.Data))
	}
}

func pubsub(sub, pub *nats.Conn) {
	star, full := make(chan *nats.Msg, 64), make(chan *nats.Msg, 64)
	sub.ChanSubscribe("orders.*", star)
	sub.ChanSubscribe("orders.>", full)
	sub.Flush()
	probe(pub, "orders.probe", star)
	probe(pub, "orders.probe", full)
	pub.Publish("orders.new", []byte("o1"))
	pub.Publish("orders.eu.new", []byte("o2"))
	hdr := nats.NewMsg("orders.hdr")
	hdr.Data = []byte("o3")
	hdr.Header.Set("X-Trace", "t1")
	if err := pub.PublishMsg(hdr); err != nil {
		fail("publish with headers: %v", err)
	}
	pub.Flush()
	expect(next(star, "orders.*"), "orders.new", "o1")
	withHeaders := next(star, "orders.*")
	expect(withHeaders, "orders.hdr", "o3")
	if withHeaders.Header.Get("X-Trace") != "t1" {
		fail("header lost across the route: %v", withHeaders.Header)
	}
	expect(next(full, "orders.>"), "orders.new", "o1")
	expect(next(full, "orders.>"), "orders.eu.new", "o2")
	expect(next(full, "orders.>"), "orders.hdr", "o3")
	fmt.Println("ok pubsub")
}

func queue(conns []*nats.Conn) {
	var mu sync.Mutex
	seen := map[string]int{}
	perServer := make([]int, len(conns))
	probed := make(chan struct{}, 1)
	// Across a leaf connection a publisher's own side always serves a group it has members of: the probe can only
	// reach the first server's members while the last server has none, so those subscribe after the probe.
	subscribe := func(i int, nc *nats.Conn) {
		for k := 0; k < 2; k++ {
			nc.QueueSubscribe("jobs", "workers", func(m *nats.Msg) {
				if string(m.Data) == "probe" {
					if i == 0 {
						select {
						case probed <- struct{}{}:
						default:
						}
					}
					return
				}
				mu.Lock()
				seen[string(m.Data)]++
				perServer[i]++
				mu.Unlock()
			})
		}
		nc.Flush()
	}
	for i, nc := range conns {
		if i == 0 || !leaf {
			subscribe(i, nc)
		}
	}
	// The first server's members must be known on the last one before counting.
	last := conns[len(conns)-1]
	deadline := time.Now().Add(timeout)
	for probedOnFirst := false; !probedOnFirst; {
		if time.Now().After(deadline) {
			fail("queue interest never crossed the route")
		}
		last.Publish("jobs", []byte("probe"))
		last.Flush()
		select {
		case <-probed:
			probedOnFirst = true
		case <-time.After(100 * time.Millisecond):
		}
	}
	if leaf {
		for i, nc := range conns[1:] {
			subscribe(i+1, nc)
		}
	}
	const count = 300
	for i := 0; i < count; i++ {
		conns[i%len(conns)].Publish("jobs", []byte(fmt.Sprintf("m%d", i)))
	}
	for _, nc := range conns {
		nc.Flush()
	}
	deadline = time.Now().Add(timeout)
	for {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n == count {
			break
		}
		if time.Now().After(deadline) {
			fail("queue: %d of %d distinct messages arrived", n, count)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// One more round trip on every path: a duplicate would have arrived by now.
	for _, nc := range conns {
		nc.Flush()
	}
	last.Publish("jobs", []byte("probe"))
	last.Flush()
	conns[0].Flush()
	mu.Lock()
	defer mu.Unlock()
	for data, n := range seen {
		if n != 1 {
			fail("queue: %s delivered %d times", data, n)
		}
	}
	for i, n := range perServer {
		if n == 0 {
			fail("queue: no message served on server %d (local members are preferred)", i)
		}
	}
	fmt.Println("ok queue")
}

func request(responder, requester *nats.Conn) {
	responder.Subscribe("svc.upper", func(m *nats.Msg) {
		m.Respond([]byte(strings.ToUpper(string(m.Data))))
	})
	responder.Flush()
	deadline := time.Now().Add(timeout)
	for {
		reply, err := requester.Request("svc.upper", []byte("hello"), 2*time.Second)
		if err == nil {
			if string(reply.Data) != "HELLO" {
				fail("request: got %q", string(reply.Data))
			}
			break
		}
		if !errors.Is(err, nats.ErrNoResponders) && !errors.Is(err, nats.ErrTimeout) || time.Now().After(deadline) {
			fail("request: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for i := 0; i < 20; i++ {
		reply, err := requester.Request("svc.upper", []byte(fmt.Sprintf("n%d", i)), 5*time.Second)
		if err != nil || string(reply.Data) != fmt.Sprintf("N%d", i) {
			fail("request %d: %v %v", i, reply, err)
		}
	}
	_, err := requester.Request("nobody.listens.here", []byte("?"), 10*time.Second)
	if !errors.Is(err, nats.ErrNoResponders) {
		fail("request without responders anywhere: expected no responders, got %v", err)
	}
	fmt.Println("ok request")
}

func unsubscribe(sub *nats.Conn) {
	leaving, _ := sub.SubscribeSync("leaving.>")
	sub.SubscribeSync("staying")
	sub.Flush()
	leaving.Unsubscribe()
	sub.Flush()
	fmt.Println("CHECK leaving.> staying")
	if answer, _ := stdin.ReadString('\n'); strings.TrimSpace(answer) != "ok" {
		fail("unsubscribe: the test answered %q", answer)
	}
	fmt.Println("ok unsubscribe")
}

func failover(first string, others []*nats.Conn) {
	reconnected := make(chan string, 1)
	nc := connect(first, nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond),
		nats.ReconnectHandler(func(c *nats.Conn) { reconnected <- c.ConnectedUrl() }))
	defer nc.Close()
	ch := make(chan *nats.Msg, 64)
	nc.ChanSubscribe("failover.>", ch)
	nc.Flush()
	publisher := others[len(others)-1]
	probe(publisher, "failover.probe", ch)
	if len(nc.DiscoveredServers()) == 0 {
		fail("failover: no server learnt from connect_urls")
	}
	fmt.Println("KILL")
	if answer, _ := stdin.ReadString('\n'); strings.TrimSpace(answer) != "ok" {
		fail("failover: the test answered %q", answer)
	}
	select {
	case url := <-reconnected:
		if url == first {
			fail("failover: reconnected to the killed server")
		}
	case <-time.After(timeout):
		fail("failover: no reconnect")
	}
	probe(publisher, "failover.probe", ch)
	publisher.Publish("failover.after", []byte("moved"))
	publisher.Flush()
	expect(next(ch, "failover.>"), "failover.after", "moved")
	fmt.Println("ok failover")
}

func main() {
	if len(os.Args) < 3 {
		fail("usage: clusterclient <url> <url> [<url> ...]")
	}
	urls := os.Args[1:]
	conns := make([]*nats.Conn, len(urls))
	for i, url := range urls {
		conns[i] = connect(url)
	}
	first, last := conns[0], conns[len(conns)-1]
	pubsub(first, last)
	queue(conns)
	request(first, last)
	unsubscribe(first)
	// A hub and its leaf share no connect_urls: nothing to fail over to.
	if !leaf {
		failover(urls[0], conns[1:])
	}
	for _, nc := range conns[1:] {
		nc.Close()
	}
	fmt.Println("PASS")
}
