package attach

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestClientOptions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		props map[string]string
		err   string // "" for none
	}{
		{"plaintext by default", nil, ""},
		{"scram", map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
			"sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="s\"cret";`}, ""},
		{"plain", map[string]string{"security.protocol": "sasl_plaintext", "sasl.mechanism": "PLAIN",
			"sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="bob" password="pw";`}, ""},
		{"unquoted", map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256",
			"sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username=alice password=pw;`}, ""},
		{"kafka's default mechanism", map[string]string{"security.protocol": "SASL_PLAINTEXT"}, "GSSAPI is not supported"},
		{"no password", map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": `x required username="bob";`}, `password="..."`},
		{"unknown protocol", map[string]string{"security.protocol": "TLS"}, "want PLAINTEXT"},
		{"jks", map[string]string{"security.protocol": "SSL", "ssl.truststore.type": "JKS"}, "PEM stores only"},
		{"missing truststore", map[string]string{"security.protocol": "SSL", "ssl.truststore.location": "/nonexistent/ca.pem"}, "ssl.truststore.location"},
		{"not a certificate", map[string]string{"security.protocol": "SSL", "ssl.truststore.certificates": "hello"}, "no PEM certificate"},
		{"unhandled security key", map[string]string{"sasl.kerberos.service.name": "kafka"}, "not supported here"},
		{"bad timeout", map[string]string{"request.timeout.ms": "soon"}, "request.timeout.ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := clientOptions(tc.props, time.Second)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want one saying %q", err, tc.err)
			}
		})
	}
}

func TestReadClientProperties(t *testing.T) {
	path := filepath.Join(t.TempDir(), "client.properties")
	body := "# a comment\nsecurity.protocol=SASL_SSL\nsasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n  username=\"alice\" password=\"pw\";\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := ReadClientProperties(path)
	if err != nil {
		t.Fatal(err)
	}
	if p["security.protocol"] != "SASL_SSL" || !strings.Contains(p["sasl.jaas.config"], `username="alice"`) {
		t.Fatalf("read %v", p)
	}
	if _, err := ReadClientProperties(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("a missing file read without error")
	}
}
