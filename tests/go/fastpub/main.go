// fastpub publishes as fast as nats.go can, the way the Go project's own client does it: buffered
// Publish calls, one Flush at the end. Each payload carries the publisher index and an 8-byte
// little-endian sequence so subscribers can check order. Built offline against Debian's
// golang-github-nats-io-go-nats-dev (GO111MODULE=off GOPATH=/usr/share/gocode).
//
// Usage: fastpub <url> <subject> <count> <payload size> <publisher index>
package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
)

func main() {
	if len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, "usage: fastpub <url> <subject> <count> <payload size> <publisher index>")
		os.Exit(2)
	}
	count, _ := strconv.Atoi(os.Args[3])
	size, _ := strconv.Atoi(os.Args[4])
	index, _ := strconv.Atoi(os.Args[5])
	nc, err := nats.Connect(os.Args[1], nats.NoReconnect())
	if err != nil {
		fmt.Fprintln(os.Stderr, "connect:", err)
		os.Exit(1)
	}
	defer nc.Close()
	payload := make([]byte, size)
	payload[0] = byte(index)
	start := time.Now()
	for i := 0; i < count; i++ {
		binary.LittleEndian.PutUint64(payload[1:], uint64(i))
		if err := nc.Publish(os.Args[2], payload); err != nil {
			fmt.Fprintln(os.Stderr, "publish:", err)
			os.Exit(1)
		}
	}
	if err := nc.FlushTimeout(3 * time.Minute); err != nil {
		fmt.Fprintln(os.Stderr, "flush:", err)
		os.Exit(1)
	}
	elapsed := time.Since(start)
	fmt.Printf("%d msgs in %.2fs = %.0f msg/s\n", count, elapsed.Seconds(), float64(count)/elapsed.Seconds())
}
