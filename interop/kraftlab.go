package interop

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// BuildKraftlab builds the kraftlab binary of the root module in root
// into dir and returns its path.
func BuildKraftlab(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "kraftlab")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build kraftlab: %v: %s", err, out)
	}
	return bin, nil
}

// Playground is a `kraftlab up --headless` process.
type Playground struct {
	Bin, Home, Session, DataDir string
	// LogFile is the nodes' server log (up --log-file), in home.
	LogFile string
	// Controllers maps controller IDs to their listeners; Brokers lists
	// the brokers' listeners, ID 101 first.
	Controllers map[int32]string
	Brokers     []string

	cmd   *exec.Cmd
	mu    sync.Mutex
	out   bytes.Buffer // everything up printed
	done  chan error
	ended chan struct{} // closed once up's process has ended
}

// StartPlayground runs `kraftlab up --headless --data-dir dataDir
// --log-file home/server.log` plus
// upArgs under its own session in home, and returns once up printed its
// banner.
func StartPlayground(ctx context.Context, bin, home, dataDir string, upArgs ...string) (*Playground, error) {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	p := &Playground{Bin: bin, Home: home, Session: "interop", DataDir: dataDir, LogFile: filepath.Join(home, "server.log"), Controllers: map[int32]string{}, done: make(chan error, 1), ended: make(chan struct{})}
	args := append([]string{"up", "--headless", "--data-dir", dataDir, "--log-file", p.LogFile}, upArgs...)
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = p.env()
	pr, pw := io.Pipe()
	p.cmd.Stdout, p.cmd.Stderr = pw, pw
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { err := p.cmd.Wait(); pw.Close(); close(p.ended); p.done <- err }()
	banner := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sent := false
		var banr bannerReader
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.out.WriteString(line + "\n")
			p.mu.Unlock()
			if sent {
				continue
			}
			banr.add(line)
			if strings.HasPrefix(line, "Stop with") {
				p.Controllers, p.Brokers = banr.controllers(), banr.brokers()
				sent = true
				banner <- nil
			}
		}
		if !sent {
			banner <- fmt.Errorf("kraftlab up ended before its banner: %s", p.Output())
		}
		io.Copy(io.Discard, pr)
	}()
	select {
	case err := <-banner:
		if err != nil {
			return nil, err
		}
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		return nil, fmt.Errorf("kraftlab up printed no banner in 30s: %s", p.Output())
	case <-ctx.Done():
		p.cmd.Process.Kill()
		return nil, ctx.Err()
	}
	return p, nil
}

func (p *Playground) env() []string {
	return append(os.Environ(), "KRAFTLAB_HOME="+p.Home, "KRAFTLAB_SESSION="+p.Session)
}

// Ended reports whether up's process has ended (read without racing the
// goroutine that waits for it).
func (p *Playground) Ended() bool {
	select {
	case <-p.ended:
		return true
	default:
		return false
	}
}

// Output is what up printed so far.
func (p *Playground) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// Run runs a kraftlab command against the playground.
func (p *Playground) Run(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Bin, args...)
	cmd.Env = p.env()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("kraftlab %s: %v: %s%s", strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String(), nil
}

// Down stops the playground with `kraftlab down` and waits for up to end.
func (p *Playground) Down(ctx context.Context) error {
	_, err := p.Run(ctx, "down")
	select {
	case werr := <-p.done:
		if err == nil && werr != nil {
			err = fmt.Errorf("kraftlab up: %v", werr)
		}
	case <-time.After(20 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
		if err == nil {
			err = fmt.Errorf("kraftlab up did not end 20s after down")
		}
	}
	return err
}

// MetadataDir is node id's __cluster_metadata-0 folder.
func (p *Playground) MetadataDir(id int32) string {
	return filepath.Join(p.DataDir, fmt.Sprintf("node-%d", id), "__cluster_metadata-0")
}
