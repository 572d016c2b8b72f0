// kvclient drives nats.go's Key-Value layer against an existing bucket (created by the test, e.g. with replicas: 3):
// put, get, update with the right and a wrong revision, create-only, history, keys, delete, purge and a watch.
// Built offline like fastpub (GO111MODULE=off GOPATH=/usr/share/gocode); run by JetStream/Cluster/ReplicatedKeyValueTests.cs.
// Exit 0 and "PASS" when every step held; otherwise a line on stderr says what failed.
//
// Usage: kvclient <url> <user> <password> <bucket>
package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
	os.Exit(1)
}

// Go 2.9.10 answers a KV direct get from any replica of an R3 bucket, a follower that has not applied the last put yet
// included, so a read right after a write may be stale there. Such reads are retried for up to 5 s and counted; the
// count is printed, and the test wants none from our server, which answers direct gets from the leader.
var staleReads int

func getUntil(kv nats.KeyValue, key string, ok func(nats.KeyValueEntry, error) bool) (nats.KeyValueEntry, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		e, err := kv.Get(key)
		if ok(e, err) || time.Now().After(deadline) {
			return e, err
		}
		staleReads++
		time.Sleep(20 * time.Millisecond)
	}
}

func main() {
	if len(os.Args) != 5 {
		fail("usage: kvclient <url> <user> <password> <bucket>")
	}
	nc, err := nats.Connect(os.Args[1], nats.UserInfo(os.Args[2], os.Args[3]), nats.Timeout(10*time.Second))
	if err != nil {
		fail("connect: %v", err)
	}
	defer nc.Close()
	js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
	if err != nil {
		fail("jetstream: %v", err)
	}
	kv, err := js.KeyValue(os.Args[4])
	if err != nil {
		fail("bucket: %v", err)
	}

	r1, err := kv.Put("go.color", []byte("red"))
	if err != nil {
		fail("put: %v", err)
	}
	r2, err := kv.Put("go.color", []byte("blue"))
	if err != nil || r2 != r1+1 {
		fail("second put: %d after %d, %v", r2, r1, err)
	}
	e, err := getUntil(kv, "go.color", func(e nats.KeyValueEntry, err error) bool { return err == nil && e.Revision() >= r2 })
	if err != nil || string(e.Value()) != "blue" || e.Revision() != r2 {
		fail("get: %v %v", e, err)
	}
	r3, err := kv.Update("go.color", []byte("green"), r2)
	if err != nil {
		fail("update: %v", err)
	}
	if _, err := kv.Update("go.color", []byte("black"), r2); err == nil {
		fail("update with a stale revision succeeded")
	}
	if _, err := kv.Create("go.size", []byte("L")); err != nil {
		fail("create: %v", err)
	}
	if _, err := kv.Create("go.size", []byte("M")); err == nil {
		fail("create of an existing key succeeded")
	}
	hist, err := kv.History("go.color")
	if err != nil || len(hist) != 3 || hist[2].Revision() != r3 || string(hist[0].Value()) != "red" {
		fail("history: %d entries, %v", len(hist), err)
	}
	keys, err := kv.Keys()
	if err != nil {
		fail("keys: %v", err)
	}
	var mine []string
	for _, k := range keys {
		if strings.HasPrefix(k, "go.") {
			mine = append(mine, k)
		}
	}
	sort.Strings(mine)
	if strings.Join(mine, ",") != "go.color,go.size" {
		fail("keys: %v", keys)
	}
	if err := kv.Delete("go.size"); err != nil {
		fail("delete: %v", err)
	}
	notFound := func(_ nats.KeyValueEntry, err error) bool { return err == nats.ErrKeyNotFound }
	if _, err := getUntil(kv, "go.size", notFound); err != nats.ErrKeyNotFound {
		fail("get after delete: %v", err)
	}
	if err := kv.Purge("go.color"); err != nil {
		fail("purge: %v", err)
	}
	if _, err := getUntil(kv, "go.color", notFound); err != nats.ErrKeyNotFound {
		fail("get after purge: %v", err)
	}

	w, err := kv.Watch("go.w.*")
	if err != nil {
		fail("watch: %v", err)
	}
	defer w.Stop()
	// The initial values end with a nil entry.
	select {
	case e := <-w.Updates():
		if e != nil {
			fail("watch: unexpected initial entry %s", e.Key())
		}
	case <-time.After(10 * time.Second):
		fail("watch: no end of initial values")
	}
	if _, err := kv.Put("go.w.a", []byte("1")); err != nil {
		fail("put for watch: %v", err)
	}
	select {
	case e := <-w.Updates():
		if e == nil || e.Key() != "go.w.a" || string(e.Value()) != "1" {
			fail("watch: got %v", e)
		}
	case <-time.After(10 * time.Second):
		fail("watch: the put was not seen")
	}
	fmt.Printf("stale reads: %d\n", staleReads)
	fmt.Println("PASS")
}
