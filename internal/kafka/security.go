package kafka

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Security is how to reach a real cluster: TLS, and SASL authentication.
// The zero value is plaintext without authentication.
type Security struct {
	// TLS connects with TLS, verifying the brokers against the system's
	// roots, or against the PEM certificates in CAFile when set.
	TLS    bool
	CAFile string
	// SASL is the mechanism: "" (none), PLAIN, SCRAM-SHA-256 or
	// SCRAM-SHA-512, with User and Password.
	SASL           string
	User, Password string
}

// Opts returns the franz-go options of s.
func (s Security) Opts() ([]kgo.Opt, error) {
	var opts []kgo.Opt
	if s.TLS || s.CAFile != "" {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if s.CAFile != "" {
			pem, err := os.ReadFile(s.CAFile)
			if err != nil {
				return nil, fmt.Errorf("cannot read the Kafka CA file: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("the Kafka CA file %s holds no PEM certificate", s.CAFile)
			}
			cfg.RootCAs = pool
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	switch m := strings.ToUpper(s.SASL); m {
	case "":
		if s.User != "" {
			return nil, fmt.Errorf("a Kafka user needs a SASL mechanism (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)")
		}
	case "PLAIN":
		opts = append(opts, kgo.SASL(plain.Auth{User: s.User, Pass: s.Password}.AsMechanism()))
	case "SCRAM-SHA-256":
		opts = append(opts, kgo.SASL(scram.Auth{User: s.User, Pass: s.Password}.AsSha256Mechanism()))
	case "SCRAM-SHA-512":
		opts = append(opts, kgo.SASL(scram.Auth{User: s.User, Pass: s.Password}.AsSha512Mechanism()))
	default:
		return nil, fmt.Errorf("unknown Kafka SASL mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", s.SASL)
	}
	return opts, nil
}

// Misconfigured reports whether err, from a first contact with the
// cluster, is a mistake in this client's own settings that waiting will
// not cure: a broker certificate that the CA does not vouch for, a broker
// that does not speak TLS to a TLS client, SASL credentials or a mechanism
// the cluster refuses, or a principal it does not authorize. A broker that
// is down or closes the connection without a reason is not (kfake, unlike
// Kafka, answers a wrong password that way).
func Misconfigured(err error) bool {
	var (
		verify *tls.CertificateVerificationError
		record tls.RecordHeaderError
		ca     x509.UnknownAuthorityError
		host   x509.HostnameError
		cert   x509.CertificateInvalidError
	)
	switch {
	case errors.As(err, &verify), errors.As(err, &record), errors.As(err, &ca), errors.As(err, &host), errors.As(err, &cert):
		return true
	}
	for _, k := range []error{kerr.SaslAuthenticationFailed, kerr.UnsupportedSaslMechanism, kerr.IllegalSaslState,
		kerr.TopicAuthorizationFailed, kerr.GroupAuthorizationFailed, kerr.ClusterAuthorizationFailed} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}
