package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"

	"mapcommons"
	"mapcommons/api"
	"mapcommons/ingest"
)

// importFiles is "mapcommons import": files straight into the store (the
// server stopped), or sent to a running server with --url.
func importFiles(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	st, err := importFlags(fs, getenv)
	if err != nil {
		return err
	}
	title := fs.String("title", "", "the title of the dataset (one file only; default: as an upload's)")
	owner := fs.String("owner", "admin", "the login of the user the datasets belong to (into the store)")
	layer := fs.String("layer", "", "the table of a GeoPackage to read (default: the first)")
	remote := fs.String("url", "", "send the files to the server at this address instead, e.g. http://127.0.0.1:8080")
	user := fs.String("user", "", "with --url, the login to send them as; the password is read from stdin or MAPCOMMONS_PASSWORD")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		fmt.Fprint(stderr, "usage: mapcommons import [--title T] [--owner LOGIN] [--data DIR] FILE…\n       mapcommons import --url URL --user LOGIN [--title T] FILE…\n")
		return errors.New("no file to import")
	}
	if *title != "" && len(files) > 1 {
		return errors.New("--title names one dataset: import one file with it")
	}
	p := newProgress(stderr)
	if *remote != "" {
		if *user == "" {
			return errors.New("--url needs --user")
		}
		password := getenv("MAPCOMMONS_PASSWORD")
		if password == "" {
			if password, err = readPassword(stdin, stderr); err != nil {
				return err
			}
		}
		for _, f := range files {
			if err := sendFile(ctx, strings.TrimRight(*remote, "/"), *user, password, f, *title, *layer, p, stdout); err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
		}
		return nil
	}

	if !isPostgresURL(*st.databaseURL) {
		// One process at a time opens the embedded store.
		lock, err := lockData(st.data, "mapcommons import")
		if errors.Is(err, errLocked) {
			return fmt.Errorf("%w: while the server runs, import through it: mapcommons import --url http://<its address> --user LOGIN FILE…", err)
		} else if err != nil {
			return err
		}
		defer lock.Close()
	}
	cfg, err := st.datasetConfig()
	if err != nil {
		return err
	}
	db, err := openStore(ctx, st.data, *st.databaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	if missing := missingServices(db.svc); len(missing) > 0 {
		return fmt.Errorf("%s cannot import yet: this version's store gives no %s", db.where, strings.Join(missing, ", "))
	}
	svc := db.svc
	me, err := svc.Users.FindUserByLogin(ctx, *owner)
	if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
		return fmt.Errorf("there is no user %q to own the datasets: name one with --owner, or create it with mapcommons user create", *owner)
	} else if err != nil {
		return err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if cfg.DefaultShare, err = checkShare(ctx, quiet, cfg.Mode, cfg.DefaultShare, svc.Groups); err != nil {
		return err
	}
	if cfg.TempDir, err = os.MkdirTemp(st.data, "import-"); err != nil {
		return err
	}
	defer os.RemoveAll(cfg.TempDir)
	// The files go straight into the store, through the same readers,
	// checks and limits as an upload (no server).
	maxUpload := cfg.MaxUpload
	if maxUpload <= 0 {
		maxUpload = api.DefaultMaxUpload
	}
	im := ingest.Importer{
		Opener:      ingest.Opener{TempDir: cfg.TempDir, MaxUpload: maxUpload},
		Datasets:    svc.Datasets,
		Policy:      cfg.Policy(),
		MaxFeatures: cfg.MaxFeatures,
	}
	for _, f := range files {
		p.start(filepath.Base(f), 0)
		ds, err := im.Import(ctx, me, f, *title, *layer, ingest.Progress{Opened: p.opened, Feature: p.feature})
		p.stop()
		if err != nil {
			return fmt.Errorf("%s: %s", f, mapcommons.ErrorMessage(err))
		}
		fmt.Fprintf(stdout, "%s: dataset %d %q, %d features in %s\n", f, ds.ID, ds.Title, ds.FeatureCount, p.elapsed().Round(time.Millisecond))
	}
	return nil
}

// importFlags are import's own flags of the store and of what an upload
// makes, as the server has them: where the store is (--data, or
// --database-url), and datasetFlags (the instance kind, the sharing list
// of new datasets, the limits of size). None of the server's other flags.
func importFlags(fs *flag.FlagSet, getenv func(string) string) (*settings, error) {
	st := &settings{}
	fs.StringVar(&st.data, "data", envDefault(getenv, "data", "./data"), "directory of the embedded store, and of the import's temporary files (MAPCOMMONS_DATA)")
	st.databaseURL = databaseURLFlag(fs, getenv)
	if err := datasetFlags(fs, getenv, st); err != nil {
		return nil, err
	}
	return st, nil
}

// sendFile posts one file (a shapefile with its sidecars) to a running
// server as a multipart upload, streamed.
func sendFile(ctx context.Context, base, login, password, path, title, layer string, p *progress, stdout io.Writer) error {
	parts, err := ingest.UploadFiles(path)
	if err != nil {
		return errors.New(mapcommons.ErrorMessage(err))
	}
	var total int64
	for _, f := range parts {
		fi, err := os.Stat(f)
		if err != nil {
			return err
		}
		total += fi.Size()
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		err := func() error {
			for name, v := range map[string]string{"title": title, "layer": layer} {
				if v != "" {
					if err := mw.WriteField(name, v); err != nil {
						return err
					}
				}
			}
			for ext, f := range parts {
				w, err := mw.CreateFormFile("dataset["+ext+"]", filepath.Base(f))
				if err != nil {
					return err
				}
				in, err := os.Open(f)
				if err != nil {
					return err
				}
				_, err = io.Copy(w, &countingReader{r: in, n: &p.bytes})
				in.Close()
				if err != nil {
					return err
				}
			}
			return mw.Close()
		}()
		pw.CloseWithError(err)
	}()
	req, err := http.NewRequestWithContext(ctx, "POST", base+"/datasets.json", pr)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.SetBasicAuth(login, password)
	p.start(filepath.Base(path), total)
	resp, err := http.DefaultClient.Do(req)
	p.stop()
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var doc struct {
		ID           int64  `json:"id"`
		Title        string `json:"title"`
		FeatureCount int64  `json:"feature_count"`
		Error        string `json:"error"`
	}
	json.Unmarshal(body, &doc)
	if resp.StatusCode != http.StatusCreated {
		if doc.Error == "" {
			doc.Error = strings.TrimSpace(string(body))
		}
		return fmt.Errorf("%s: %s", resp.Status, doc.Error)
	}
	fmt.Fprintf(stdout, "%s: dataset %d %q, %d features in %s (%s)\n", path, doc.ID, doc.Title, doc.FeatureCount,
		p.elapsed().Round(time.Millisecond), resp.Header.Get("Location"))
	return nil
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n.Add(int64(n))
	return n, err
}

// progress shows how an import goes: on a terminal one line redrawn in
// place (bytes, features a second, time left), otherwise a plain line
// every few seconds.
type progress struct {
	w        io.Writer
	tty      bool
	every    time.Duration
	mu       sync.Mutex
	name     string
	total    int64        // bytes to send (remote); 0: the size of the file being read
	file     *os.File     // the file being read (local)
	bytes    atomic.Int64 // bytes sent (remote)
	features atomic.Int64 // features stored (local)
	began    time.Time
	took     time.Duration
	done     chan struct{}
	wg       sync.WaitGroup
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, every: 2 * time.Second}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty, p.every = true, 200*time.Millisecond
	}
	return p
}

func (p *progress) opened(f *os.File) {
	// The file named on the command line, else the first one opened (the
	// data file extracted from a zip).
	p.mu.Lock()
	if p.file == nil || filepath.Base(f.Name()) == p.name {
		p.file = f
	}
	p.mu.Unlock()
}

func (p *progress) feature() { p.features.Add(1) }

func (p *progress) start(name string, total int64) {
	p.mu.Lock()
	p.name, p.total, p.file = name, total, nil
	p.mu.Unlock()
	p.bytes.Store(0)
	p.features.Store(0)
	p.began = time.Now()
	p.done = make(chan struct{})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(p.every)
		defer t.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-t.C:
				p.show()
			}
		}
	}()
}

func (p *progress) stop() {
	close(p.done)
	p.wg.Wait()
	p.took = time.Since(p.began)
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

func (p *progress) elapsed() time.Duration { return p.took }

// show writes one report: how far, how fast, how long still.
func (p *progress) show() {
	p.mu.Lock()
	name, total, f := p.name, p.total, p.file
	p.mu.Unlock()
	done := p.bytes.Load()
	if f != nil {
		if fi, err := f.Stat(); err == nil {
			total = fi.Size()
		}
		if off, err := f.Seek(0, io.SeekCurrent); err == nil {
			done = off
		}
	}
	el := time.Since(p.began)
	line := fmt.Sprintf("%s: %s", name, formatBytes(done))
	if total > 0 {
		line += fmt.Sprintf(" of %s (%d%%)", formatBytes(total), done*100/max(total, 1))
	}
	if n := p.features.Load(); n > 0 {
		line += fmt.Sprintf(", %d features, %.0f features/s", n, float64(n)/el.Seconds())
	}
	if total > 0 && done > 0 && done < total {
		left := time.Duration(float64(el) * float64(total-done) / float64(done))
		line += fmt.Sprintf(", %s left", left.Round(time.Second))
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
