package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// SecretFile is the file in a cluster's data folder that holds the
// playground's member secret: the password its nodes authenticate to each
// other with (SCRAM-SHA-256 as wire.MemberUser).
const SecretFile = "cluster-secret"

// secretBytes is the secret's random length; it is stored hex-encoded.
const secretBytes = 32

// minSecretLen bounds a secret read back from the file, so that a
// truncated or hand-edited file is refused rather than trusted.
const minSecretLen = 32

// LoadSecret returns the member secret of the cluster whose data folder is
// dataDir: the one in dataDir/SecretFile, or a new random one written
// there with mode 0600 if the file does not exist, so that a restart on
// the same folder reuses it. A file that others may read, or that is not
// a plausible secret, is refused. Several nodes may call it at once: the
// file appears whole or not at all.
func LoadSecret(dataDir string) (string, error) {
	path := filepath.Join(dataDir, SecretFile)
	secret, err := readSecret(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return secret, err
	}
	if err := createSecret(dataDir, path); err != nil {
		return "", err
	}
	return readSecret(path)
}

func readSecret(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	switch {
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("member secret %s: not a regular file", path)
	case fi.Mode().Perm()&0o077 != 0:
		return "", fmt.Errorf("member secret %s: mode %v lets others read it: chmod 600 it", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("member secret: %w", err)
	}
	s := strings.TrimSpace(string(b))
	if len(s) < minSecretLen || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return "", fmt.Errorf("member secret %s: want at least %d printable characters; delete it to make a new one", path, minSecretLen)
	}
	return s, nil
}

// createSecret writes a new secret to a private temporary file and links
// it into place, which fails if another caller got there first.
func createSecret(dataDir, path string) error {
	b := make([]byte, secretBytes)
	rand.Read(b)
	tmp, err := os.CreateTemp(dataDir, SecretFile+".tmp-*") // mode 0600
	if err != nil {
		return fmt.Errorf("member secret: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("member secret: %w", err)
	}
	_, err = tmp.WriteString(hex.EncodeToString(b) + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("member secret: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("member secret: %w", err)
	}
	return nil
}
