package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/spate-io/spate/internal/segment"
	"github.com/spate-io/spate/internal/testcert"
)

// TestSecurity: a cluster with TLS and SCRAM takes records from a producer
// with the right CA, mechanism and password, and refuses a wrong password.
func TestSecurity(t *testing.T) {
	cert := testcert.New(t, "kfake")
	ca := cert.CertFile
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "logs"),
		kfake.TLS(&tls.Config{Certificates: []tls.Certificate{cert.TLS}}),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "spate", "s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	produce := func(sec Security) error {
		opts, err := sec.Opts()
		if err != nil {
			return err
		}
		p, err := NewProducer(Config{Brokers: c.ListenAddrs(), Topic: "logs", DeliveryTimeout: 3 * time.Second, Opts: opts})
		if err != nil {
			return err
		}
		defer p.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		a, err := p.Enqueue(ctx, []segment.Group{{Lines: []byte(`{"_msg":"secure"}` + "\n")}})
		if err != nil {
			return err
		}
		return a.Wait(ctx)
	}
	if err := produce(Security{TLS: true, CAFile: ca, SASL: "SCRAM-SHA-256", User: "spate", Password: "s3cret"}); err != nil {
		t.Fatalf("right credentials: %v", err)
	}
	if err := produce(Security{TLS: true, CAFile: ca, SASL: "SCRAM-SHA-256", User: "spate", Password: "wrong"}); err == nil {
		t.Fatal("a wrong password produced")
	}
	if err := produce(Security{SASL: "SCRAM-SHA-256", User: "spate", Password: "s3cret"}); err == nil {
		t.Fatal("plaintext reached a TLS cluster")
	}
	for _, bad := range []Security{{SASL: "GSSAPI"}, {User: "u"}, {CAFile: ca + ".missing"}} {
		if _, err := bad.Opts(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// TestMisconfigured: refused credentials, authorization and certificate
// errors are the client's mistakes; a broker that is down or hangs up is
// not.
func TestMisconfigured(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("cannot list Kafka topics: %w", kerr.SaslAuthenticationFailed),
		kerr.UnsupportedSaslMechanism, kerr.TopicAuthorizationFailed, kerr.GroupAuthorizationFailed,
		fmt.Errorf("unable to dial: %w", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}),
		x509.HostnameError{Host: "kafka-1"},
		tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"},
	} {
		if !Misconfigured(err) {
			t.Errorf("%v: not a misconfiguration", err)
		}
	}
	for _, err := range []error{nil, io.EOF, context.DeadlineExceeded, errors.New("dial tcp: connection refused"),
		kerr.NotLeaderForPartition, kerr.UnknownTopicOrPartition} {
		if Misconfigured(err) {
			t.Errorf("%v: a misconfiguration", err)
		}
	}
}
