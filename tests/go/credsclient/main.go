// credsclient logs in with nsc-style creds files through nats.go's UserCredentials and prints what it
// saw, one normalized line per step, so the same transcript can be compared across clients and servers:
// a round trip on greet.a, a publish to secret.x refused by the user's permissions, and a login with
// the revoked user's creds refused. Built offline against Debian's golang-github-nats-io-go-nats-dev
// (GO111MODULE=off GOPATH=/usr/share/gocode).
//
// Usage: credsclient <url> <user creds> <revoked user creds>
package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

var violation = regexp.MustCompile(`Permissions Violation for (Publish|Subscription) to "?([^"\s]+)"?`)

func fail(what string, err error) {
	fmt.Fprintln(os.Stderr, what+":", err)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: credsclient <url> <user creds> <revoked user creds>")
		os.Exit(2)
	}
	errs := make(chan error, 16)
	nc, err := nats.Connect(os.Args[1], nats.UserCredentials(os.Args[2]), nats.NoReconnect(),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }))
	if err != nil {
		fail("connect", err)
	}
	defer nc.Close()
	fmt.Println("connected")

	sub, err := nc.SubscribeSync("greet.>")
	if err != nil {
		fail("subscribe", err)
	}
	if err := nc.Publish("greet.a", []byte("hello")); err != nil {
		fail("publish", err)
	}
	msg, err := sub.NextMsg(30 * time.Second)
	if err != nil {
		fail("receive", err)
	}
	fmt.Printf("received %s %s\n", msg.Subject, string(msg.Data))

	if err := nc.Publish("secret.x", []byte("no")); err != nil {
		fail("publish secret", err)
	}
	select {
	case err := <-errs:
		if m := violation.FindStringSubmatch(err.Error()); m != nil {
			fmt.Printf("violation %s %s\n", strings.ToLower(m[1]), m[2])
		} else {
			fmt.Printf("error %s\n", err)
		}
	case <-time.After(30 * time.Second):
		fail("violation", fmt.Errorf("no permissions violation reported"))
	}

	revoked, err := nats.Connect(os.Args[1], nats.UserCredentials(os.Args[3]), nats.NoReconnect())
	if err == nil {
		revoked.Close()
		fmt.Println("revoked connected")
	} else if strings.Contains(strings.ToLower(err.Error()), "authorization violation") {
		fmt.Println("revoked Authorization Violation")
	} else {
		fmt.Printf("revoked %s\n", err)
	}
}
