package wire

import (
	"bytes"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// scramCredential is what a server keeps of the secret (RFC 5802 §3): the
// salt, and the stored and server keys derived from the salted password.
type scramCredential struct {
	salt      []byte
	storedKey []byte
	serverKey []byte
}

// newScramCredential derives a credential for secret with a fresh salt.
func newScramCredential(secret string) (*scramCredential, error) {
	salt := make([]byte, 16)
	rand.Read(salt)
	salted, err := pbkdf2.Key(sha256.New, secret, salt, scramIterations, sha256.Size)
	if err != nil {
		return nil, fmt.Errorf("derive the SCRAM credential: %w", err)
	}
	clientKey := hmacSHA256(salted, []byte("Client Key"))
	stored := sha256.Sum256(clientKey)
	return &scramCredential{salt: salt, storedKey: stored[:], serverKey: hmacSHA256(salted, []byte("Server Key"))}, nil
}

func hmacSHA256(key, msg []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(msg)
	return m.Sum(nil)
}

// Bounds on what a client may make the server hold of a SCRAM exchange.
// Real clients' nonces are 24 to 48 characters (Kafka's Java client 26,
// franz-go 24) and their messages about a hundred bytes; Kafka bounds
// them only by sasl.server.max.receive.size (512 KiB), and a nonce of
// that size is kept twice and sent back.
const (
	maxScramNonce   = 256
	maxScramMessage = 1 << 10
)

// errScram is any failure of a SCRAM exchange. The client is told only
// that its credentials are invalid, as Kafka tells it (the details could
// help an attacker); the server's log has the reason.
var errScram = errors.New("SCRAM")

// scramServer is the server side of one SCRAM-SHA-256 exchange (RFC 5802,
// RFC 7677): client-first → server-first, client-final → server-final.
// It is used by one connection's reader only.
type scramServer struct {
	cred  *scramCredential
	step  int
	gs2   string // the client's GS2 header, "n,," or "n,a=<authzid>,"
	nonce string // client nonce + server nonce
	// authPrefix is client-first-message-bare "," server-first-message.
	authPrefix []byte
}

// next answers the client's message; done reports that the client proved
// it holds the secret and the answer is the last one.
func (s *scramServer) next(msg []byte) (out []byte, done bool, err error) {
	step := s.step
	s.step++
	if len(msg) > maxScramMessage {
		return nil, false, fmt.Errorf("%w: client message of %d bytes, more than %d", errScram, len(msg), maxScramMessage)
	}
	switch step {
	case 0:
		out, err = s.clientFirst(string(msg))
		return out, false, err
	case 1:
		out, err = s.clientFinal(string(msg))
		return out, err == nil, err
	default:
		return nil, false, fmt.Errorf("%w: message after the exchange completed", errScram)
	}
}

func (s *scramServer) clientFirst(msg string) ([]byte, error) {
	// gs2-header = "n," [ "a=" authzid ] "," ; no channel binding, as
	// Kafka's ClientFirstMessage accepts.
	if !strings.HasPrefix(msg, "n,") {
		return nil, fmt.Errorf("%w: client-first message must start with the GS2 header \"n,\"", errScram)
	}
	i := strings.IndexByte(msg[2:], ',')
	if i < 0 {
		return nil, fmt.Errorf("%w: client-first message has no bare part", errScram)
	}
	authzid := msg[2 : 2+i]
	s.gs2 = msg[:2+i+1]
	bare := msg[2+i+1:]
	attrs := strings.Split(bare, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "n=") || !strings.HasPrefix(attrs[1], "r=") {
		return nil, fmt.Errorf("%w: client-first message wants n=user,r=nonce", errScram)
	}
	user, ok := saslName(attrs[0][2:])
	if !ok || user != MemberUser {
		return nil, fmt.Errorf("%w: unknown user", errScram)
	}
	if authzid != "" {
		az, ok := saslName(strings.TrimPrefix(authzid, "a="))
		if !strings.HasPrefix(authzid, "a=") || !ok || az != user {
			return nil, fmt.Errorf("%w: authorization id differs from the user name", errScram)
		}
	}
	for _, ext := range attrs[2:] {
		if ext == "tokenauth=true" {
			return nil, fmt.Errorf("%w: delegation tokens are not supported", errScram)
		}
	}
	cnonce := attrs[1][2:]
	if cnonce == "" || !printable(cnonce) {
		return nil, fmt.Errorf("%w: bad client nonce", errScram)
	}
	if len(cnonce) > maxScramNonce {
		return nil, fmt.Errorf("%w: client nonce of %d bytes, more than %d", errScram, len(cnonce), maxScramNonce)
	}
	snonce := make([]byte, 18)
	rand.Read(snonce)
	s.nonce = cnonce + base64.RawStdEncoding.EncodeToString(snonce)
	first := "r=" + s.nonce + ",s=" + base64.StdEncoding.EncodeToString(s.cred.salt) + ",i=" + strconv.Itoa(scramIterations)
	s.authPrefix = []byte(bare + "," + first)
	return []byte(first), nil
}

func (s *scramServer) clientFinal(msg string) ([]byte, error) {
	i := strings.LastIndex(msg, ",p=")
	if i < 0 {
		return nil, fmt.Errorf("%w: client-final message has no proof", errScram)
	}
	withoutProof, proofB64 := msg[:i], msg[i+3:]
	attrs := strings.Split(withoutProof, ",")
	if len(attrs) < 2 || attrs[0] != "c="+base64.StdEncoding.EncodeToString([]byte(s.gs2)) {
		return nil, fmt.Errorf("%w: channel binding does not match the GS2 header", errScram)
	}
	if attrs[1] != "r="+s.nonce {
		return nil, fmt.Errorf("%w: invalid nonce in the client-final message", errScram)
	}
	proof, err := base64.StdEncoding.DecodeString(proofB64)
	if err != nil || len(proof) != sha256.Size {
		return nil, fmt.Errorf("%w: malformed client proof", errScram)
	}
	authMsg := append(append(bytes.Clone(s.authPrefix), ','), withoutProof...)
	// ClientKey = ClientProof XOR HMAC(StoredKey, AuthMessage); the
	// client knows the secret if H(ClientKey) is the stored key.
	clientKey := hmacSHA256(s.cred.storedKey, authMsg)
	for j := range clientKey {
		clientKey[j] ^= proof[j]
	}
	got := sha256.Sum256(clientKey)
	if subtle.ConstantTimeCompare(got[:], s.cred.storedKey) != 1 {
		return nil, fmt.Errorf("%w: invalid client proof (wrong secret)", errScram)
	}
	return []byte("v=" + base64.StdEncoding.EncodeToString(hmacSHA256(s.cred.serverKey, authMsg))), nil
}

// saslName unescapes a SCRAM saslname ("=2C" is ',', "=3D" is '=').
func saslName(s string) (string, bool) {
	if !strings.Contains(s, "=") {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "=2C"):
			b.WriteByte(',')
		case strings.HasPrefix(s[i:], "=3D"):
			b.WriteByte('=')
		default:
			return "", false
		}
		i += 2
	}
	return b.String(), true
}

// printable reports whether s is printable ASCII without a comma, as a
// SCRAM nonce must be.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == ',' {
			return false
		}
	}
	return true
}
