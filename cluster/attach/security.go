package attach

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/magiconair/properties"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// ReadClientProperties reads a Kafka client properties file, as Kafka's
// tools take it with --command-config.
func ReadClientProperties(path string) (map[string]string, error) {
	p, err := properties.LoadFile(path, properties.UTF8)
	if err != nil {
		return nil, fmt.Errorf("read client properties: %w", err)
	}
	// A property's value may name another (${...}); Kafka does not
	// expand them, so neither do we.
	p.DisableExpansion = true
	return p.Map(), nil
}

// securityProtocol is security.protocol.
type securityProtocol string

const (
	protoPlaintext     securityProtocol = "PLAINTEXT"
	protoSSL           securityProtocol = "SSL"
	protoSASLPlaintext securityProtocol = "SASL_PLAINTEXT"
	protoSASLSSL       securityProtocol = "SASL_SSL"
)

// handled are the client properties clientOptions acts on; other
// security properties are refused, since ignoring one could connect
// less safely than the user asked.
var handled = map[string]bool{
	"security.protocol": true, "sasl.mechanism": true, "sasl.jaas.config": true,
	"ssl.truststore.type": true, "ssl.truststore.location": true, "ssl.truststore.certificates": true,
	"ssl.keystore.type": true, "ssl.keystore.location": true,
	"ssl.keystore.certificate.chain": true, "ssl.keystore.key": true,
	"ssl.endpoint.identification.algorithm": true,
	"client.id":                             true, "request.timeout.ms": true,
}

// clientOptions turns Kafka client properties into franz-go options:
// security.protocol, SASL PLAIN and SCRAM with their JAAS login, and TLS
// with PEM trust and key stores. timeout bounds each request unless
// request.timeout.ms says otherwise.
func clientOptions(props map[string]string, timeout time.Duration) ([]kgo.Opt, error) {
	for k := range props {
		if !handled[k] && (strings.HasPrefix(k, "sasl.") || strings.HasPrefix(k, "ssl.") || strings.HasPrefix(k, "security.")) {
			return nil, fmt.Errorf("client property %s is not supported here", k)
		}
	}
	id := props["client.id"]
	if id == "" {
		id = "kraftlab-attach"
	}
	if v, ok := props["request.timeout.ms"]; ok {
		var ms int64
		if _, err := fmt.Sscan(v, &ms); err != nil || ms <= 0 {
			return nil, fmt.Errorf("request.timeout.ms %q: want a positive number of milliseconds", v)
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	opts := []kgo.Opt{
		kgo.ClientID(id),
		kgo.DialTimeout(timeout),
		kgo.RequestTimeoutOverhead(timeout),
		kgo.RetryTimeout(timeout),
		kgo.MetadataMinAge(100 * time.Millisecond),
	}
	proto := securityProtocol(strings.ToUpper(strings.TrimSpace(props["security.protocol"])))
	if proto == "" {
		proto = protoPlaintext
	}
	switch proto {
	case protoPlaintext:
	case protoSSL, protoSASLSSL:
		cfg, err := tlsConfig(props)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.Dialer((&tls.Dialer{NetDialer: &net.Dialer{Timeout: timeout}, Config: cfg}).DialContext))
	case protoSASLPlaintext:
	default:
		return nil, fmt.Errorf("security.protocol %q: want PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", props["security.protocol"])
	}
	if proto == protoSASLPlaintext || proto == protoSASLSSL {
		m, err := saslMechanism(props)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.SASL(m))
	}
	return opts, nil
}

// jaasOption finds key="value", or key=value unquoted, in a JAAS login
// line.
var jaasOption = regexp.MustCompile(`(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;"]+))`)

// saslMechanism is sasl.mechanism with the username and password of
// sasl.jaas.config.
func saslMechanism(props map[string]string) (sasl.Mechanism, error) {
	mech := strings.ToUpper(strings.TrimSpace(props["sasl.mechanism"]))
	if mech == "" {
		mech = "GSSAPI" // Kafka's default
	}
	jaas := props["sasl.jaas.config"]
	creds := map[string]string{}
	for _, m := range jaasOption.FindAllStringSubmatch(jaas, -1) {
		v := m[3]
		if v == "" {
			v = strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(m[2])
		}
		creds[m[1]] = v
	}
	user, pass := creds["username"], creds["password"]
	if mech != "GSSAPI" && (user == "" || pass == "") {
		return nil, errors.New(`sasl.jaas.config: want a login module with username="..." and password="..."`)
	}
	switch mech {
	case "PLAIN":
		return plain.Auth{User: user, Pass: pass}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism(), nil
	case "SCRAM-SHA-512":
		return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("sasl.mechanism %s is not supported here: use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", mech)
}

// tlsConfig is the TLS of the ssl.* properties. Go reads PEM stores
// only: Kafka takes ssl.truststore.type=PEM and ssl.keystore.type=PEM
// too, so a JKS or PKCS12 store must be converted first.
func tlsConfig(props map[string]string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if alg, ok := props["ssl.endpoint.identification.algorithm"]; ok && strings.TrimSpace(alg) == "" {
		// Kafka's way to skip the host name check. The chain is still
		// verified against the trust store below.
		cfg.InsecureSkipVerify = true
	}
	for _, k := range []string{"ssl.truststore.type", "ssl.keystore.type"} {
		if t := strings.ToUpper(strings.TrimSpace(props[k])); t != "" && t != "PEM" {
			return nil, fmt.Errorf("%s %s: kraftlab reads PEM stores only (convert it, e.g. with keytool -exportcert -rfc or openssl pkcs12)", k, t)
		}
	}
	trust := props["ssl.truststore.certificates"]
	if loc := props["ssl.truststore.location"]; loc != "" {
		b, err := os.ReadFile(loc)
		if err != nil {
			return nil, fmt.Errorf("ssl.truststore.location: %w", err)
		}
		trust = string(b)
	}
	if trust != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(trust)) {
			return nil, errors.New("ssl truststore: no PEM certificate in it")
		}
		cfg.RootCAs = pool
	}
	if cfg.InsecureSkipVerify {
		// The chain is still checked, against the trust store or the
		// system's, as Kafka checks it against its default one.
		pool := cfg.RootCAs
		if pool == nil {
			sys, err := x509.SystemCertPool()
			if err != nil {
				return nil, fmt.Errorf("ssl: the system's certificates: %w", err)
			}
			pool = sys
		}
		cfg.VerifyPeerCertificate = verifyChain(pool)
	}
	chain, key := props["ssl.keystore.certificate.chain"], props["ssl.keystore.key"]
	if loc := props["ssl.keystore.location"]; loc != "" {
		b, err := os.ReadFile(loc)
		if err != nil {
			return nil, fmt.Errorf("ssl.keystore.location: %w", err)
		}
		chain, key = string(b), string(b)
	}
	if chain != "" || key != "" {
		cert, err := tls.X509KeyPair([]byte(chain), []byte(key))
		if err != nil {
			return nil, fmt.Errorf("ssl keystore: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// verifyChain checks the server's chain against pool without its host
// name, for ssl.endpoint.identification.algorithm set empty.
func verifyChain(pool *x509.CertPool) func([][]byte, [][]*x509.Certificate) error {
	return func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 0 {
			return errors.New("tls: the server sent no certificate")
		}
		certs := make([]*x509.Certificate, len(raw))
		for i, r := range raw {
			c, err := x509.ParseCertificate(r)
			if err != nil {
				return fmt.Errorf("tls: server certificate: %w", err)
			}
			certs[i] = c
		}
		inter := x509.NewCertPool()
		for _, c := range certs[1:] {
			inter.AddCert(c)
		}
		_, err := certs[0].Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter})
		return err
	}
}
