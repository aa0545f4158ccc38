package kafka

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"

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
