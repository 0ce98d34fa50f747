// An HTTP/3 server on quic-go with its default congestion control, for `iwlab probe --quic` tests:
// quic-go's initial window is a constant, 32 × 1280 B (internal/congestion/cubic_sender.go).
//
//	quic_go_server ADDR:PORT [SIZE]
//
// Every request gets SIZE bytes (default 1 MiB). The certificate (ECDSA P-256, self-signed) is made
// at start. Prints "ready" once it listens.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/quic-go/quic-go/http3"
)

func certificate() tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "quic.probe.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(48 * time.Hour),
		DNSNames: []string{"quic.probe.test"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func main() {
	size := 1 << 20
	if len(os.Args) > 2 {
		size, _ = strconv.Atoi(os.Args[2])
	}
	body := make([]byte, size)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		w.Write(body)
	})
	conn, err := net.ListenPacket("udp", os.Args[1])
	if err != nil {
		panic(err)
	}
	server := &http3.Server{Handler: handler,
		TLSConfig: http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{certificate()}})}
	fmt.Println("ready")
	if err := server.Serve(conn); err != nil {
		panic(err)
	}
}
