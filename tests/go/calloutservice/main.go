// calloutservice is an auth callout service for an operator-mode account, written with nats.go the
// way an application would be, to check the server's wire format from Go's side: it logs in with the
// service user's creds, answers $SYS.REQ.USER.AUTH, opens requests sealed for its xkey (nats-server
// 2.10's xkv1 format: curve25519 + xsalsa20-poly1305 from golang.org/x/crypto/nacl/box), verifies the
// request JWT's signature with the server's nkey and its claims, and answers with an authorization
// response signed by the callout account, sealed back to the server's xkey. A client whose auth_token
// is "go-alice" gets a user JWT issued by the placement account (publish only to greet.>); any other
// gets an error.
// Debian's nkeys (0.3.0) and jwt (2.3.0) predate xkeys and authorization claims, so the curve key
// encoding and the response claims are written out here. Built offline (GO111MODULE=off
// GOPATH=/usr/share/gocode).
//
// Usage: calloutservice <url> <service creds> <callout account seed> <placement account seed> <xkey seed>
// Prints "ready" once subscribed, then one line per request; runs until stdin closes.
package main

import (
	"bufio"
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"golang.org/x/crypto/nacl/box"
)

const xkeyVersion = "xkv1"

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

func fail(what string, err error) {
	fmt.Fprintln(os.Stderr, what+":", err)
	os.Exit(1)
}

// curvePublic decodes an "X..." public key: prefix byte, 32 key bytes, crc16.
func curvePublic(key string) (*[32]byte, error) {
	raw, err := b32.DecodeString(key)
	if err != nil || len(raw) != 35 || raw[0] != 23<<3 {
		return nil, fmt.Errorf("not a public xkey: %q", key)
	}
	var k [32]byte
	copy(k[:], raw[1:33])
	return &k, nil
}

// curveSeed decodes an "SX..." seed: two prefix bytes, 32 key bytes, crc16.
func curveSeed(seed string) (*[32]byte, error) {
	raw, err := b32.DecodeString(seed)
	if err != nil || len(raw) != 36 || raw[0]&0xf8 != 18<<3 {
		return nil, errors.New("not a curve seed")
	}
	var k [32]byte
	copy(k[:], raw[2:34])
	return &k, nil
}

func open(sealed []byte, sender string, priv *[32]byte) ([]byte, error) {
	if len(sealed) < len(xkeyVersion)+24 || string(sealed[:len(xkeyVersion)]) != xkeyVersion {
		return nil, errors.New("not xkv1")
	}
	pub, err := curvePublic(sender)
	if err != nil {
		return nil, err
	}
	var nonce [24]byte
	copy(nonce[:], sealed[len(xkeyVersion):])
	out, ok := box.Open(nil, sealed[len(xkeyVersion)+24:], &nonce, pub, priv)
	if !ok {
		return nil, errors.New("cannot open")
	}
	return out, nil
}

func seal(input []byte, recipient string, priv *[32]byte) ([]byte, error) {
	pub, err := curvePublic(recipient)
	if err != nil {
		return nil, err
	}
	var nonce [24]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, err
	}
	out := append([]byte(xkeyVersion), nonce[:]...)
	return box.Seal(out, input, &nonce, pub, priv), nil
}

// sign encodes claims as a JWT signed by kp, as jwt v2 does.
func sign(kp nkeys.KeyPair, claims map[string]interface{}) (string, error) {
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"typ":"JWT","alg":"ed25519-nkey"}`))
	body, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	token := header + "." + base64.RawURLEncoding.EncodeToString(body)
	sig, err := kp.Sign([]byte(token))
	if err != nil {
		return "", err
	}
	return token + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// verify checks the request JWT's signature against its issuer (the server's nkey) and returns its claims.
func verify(token string) (map[string]interface{}, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, errors.New("not a JWT")
	}
	body, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, err
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, err
	}
	var claims map[string]interface{}
	if err := json.Unmarshal(body, &claims); err != nil {
		return nil, err
	}
	iss, _ := claims["iss"].(string)
	if !nkeys.IsValidPublicServerKey(iss) {
		return nil, fmt.Errorf("issuer %q is not a server key", iss)
	}
	pub, err := nkeys.FromPublicKey(iss)
	if err != nil {
		return nil, err
	}
	if err := pub.Verify([]byte(parts[0]+"."+parts[1]), sig); err != nil {
		return nil, errors.New("request signature does not verify")
	}
	return claims, nil
}

func jti() string {
	var b [16]byte
	rand.Read(b[:])
	return b32.EncodeToString(b[:])
}

func answer(m *nats.Msg, account nkeys.KeyPair, accountPub string, placement nkeys.KeyPair, priv *[32]byte) (string, error) {
	serverXkey := m.Header.Get("Nats-Server-Xkey")
	if serverXkey == "" {
		return "", errors.New("request not sealed")
	}
	token, err := open(m.Data, serverXkey, priv)
	if err != nil {
		return "", err
	}
	claims, err := verify(string(token))
	if err != nil {
		return "", err
	}
	natsPart, _ := claims["nats"].(map[string]interface{})
	server, _ := natsPart["server_id"].(map[string]interface{})
	connect, _ := natsPart["connect_opts"].(map[string]interface{})
	if claims["aud"] != "nats-authorization-request" || claims["sub"] != accountPub || natsPart["type"] != "authorization_request" {
		return "", fmt.Errorf("unexpected request claims: %v", claims)
	}
	if server["xkey"] != serverXkey {
		return "", fmt.Errorf("server xkey %v is not the header's %s", server["xkey"], serverXkey)
	}
	userNkey, _ := natsPart["user_nkey"].(string)
	serverID, _ := server["id"].(string)
	tokenOpt, _ := connect["auth_token"].(string)
	now := time.Now().Unix()
	response := map[string]interface{}{"jti": jti(), "iat": now, "iss": accountPub, "sub": userNkey, "aud": serverID}
	outcome := "refused " + tokenOpt
	if tokenOpt == "go-alice" {
		placementPub, _ := placement.PublicKey()
		user, err := sign(placement, map[string]interface{}{
			"jti": jti(), "iat": now, "iss": placementPub, "sub": userNkey, "name": "alice",
			"nats": map[string]interface{}{
				"pub":  map[string]interface{}{"allow": []string{"greet.>", "_INBOX.>"}},
				"subs": -1, "data": -1, "payload": -1, "type": "user", "version": 2,
			},
		})
		if err != nil {
			return "", err
		}
		response["nats"] = map[string]interface{}{"jwt": user, "type": "authorization_response", "version": 2}
		outcome = "admitted " + tokenOpt
	} else {
		response["nats"] = map[string]interface{}{"error": "not welcome", "type": "authorization_response", "version": 2}
	}
	signed, err := sign(account, response)
	if err != nil {
		return "", err
	}
	sealed, err := seal([]byte(signed), serverXkey, priv)
	if err != nil {
		return "", err
	}
	return outcome, m.Respond(sealed)
}

func main() {
	if len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, "usage: calloutservice <url> <service creds> <callout account seed> <placement account seed> <xkey seed>")
		os.Exit(2)
	}
	account, err := nkeys.FromSeed([]byte(os.Args[3]))
	if err != nil {
		fail("account seed", err)
	}
	accountPub, _ := account.PublicKey()
	placement, err := nkeys.FromSeed([]byte(os.Args[4]))
	if err != nil {
		fail("placement account seed", err)
	}
	priv, err := curveSeed(os.Args[5])
	if err != nil {
		fail("xkey seed", err)
	}
	nc, err := nats.Connect(os.Args[1], nats.UserCredentials(os.Args[2]), nats.NoReconnect())
	if err != nil {
		fail("connect", err)
	}
	defer nc.Close()
	lines := make(chan string, 16)
	_, err = nc.Subscribe("$SYS.REQ.USER.AUTH", func(m *nats.Msg) {
		outcome, err := answer(m, account, accountPub, placement, priv)
		if err != nil {
			lines <- "error " + err.Error()
			return
		}
		lines <- outcome
	})
	if err != nil {
		fail("subscribe", err)
	}
	if err := nc.Flush(); err != nil {
		fail("flush", err)
	}
	fmt.Println("ready")
	done := make(chan struct{})
	go func() {
		bufio.NewReader(os.Stdin).ReadString('\n')
		close(done)
	}()
	for {
		select {
		case line := <-lines:
			fmt.Println(line)
		case <-done:
			return
		}
	}
}
