package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons/internal/pgtest"
)

// TestPGFloor: the bench's floor of a PostgreSQL read (bench-pgfloor)
// answers an item of the rivals' table as the GeoJSON feature
// pg_featureserv gives of it (the same geometry and properties), and a
// missing or malformed id with a 404.
func TestPGFloor(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url := pgtest.URL(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `CREATE TABLE `+pgfsTable+` (fid bigint PRIMARY KEY, geom geometry(Point, 4326), id bigint, n bigint, x double precision, cat text, label text, ts text);
		INSERT INTO `+pgfsTable+` VALUES (7, ST_SetSRID(ST_Point(10.25, -45.5), 4326), 70, 3, 1.5e-7, 'c"3', E'é\n', '2020-05-27T10:18:09Z')`); err != nil {
		t.Fatal(err)
	}
	logs := make(chan string, 16)
	done := make(chan error, 1)
	go func() { done <- servePGFloor(ctx, []string{"--database-url", url}, lineWriter(logs)) }()
	var addr string
	for addr == "" {
		select {
		case err := <-done:
			t.Fatalf("the floor ended before it listened: %v", err)
		case line := <-logs:
			if m := regexp.MustCompile(`addr=(\S+)`).FindStringSubmatch(line); m != nil {
				addr = m[1]
			}
		case <-time.After(time.Minute): // a safety net only
			t.Fatal("the floor did not say where it listens")
		}
	}
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get("/items/7")
	var got, want any
	if err := json.Unmarshal([]byte(body), &got); err != nil || code != 200 {
		t.Fatalf("item: %d %s (%v)", code, body, err)
	}
	json.Unmarshal([]byte(`{"type":"Feature","id":7,"geometry":{"type":"Point","coordinates":[10.25,-45.5]},
		"properties":{"id":70,"n":3,"x":1.5e-7,"cat":"c\"3","label":"é\n","ts":"2020-05-27T10:18:09Z"}}`), &want)
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Errorf("item: %s, want %s", g, w)
	}
	for _, p := range []string{"/items/8", "/items/x", "/"} {
		if code, body := get(p); code != http.StatusNotFound {
			t.Errorf("%s: %d %s, want 404", p, code, body)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("the floor ended with %v", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lineWriter sends what is written to it (a log line a write) on its
// channel.
type lineWriter chan string

func (w lineWriter) Write(p []byte) (int, error) {
	w <- string(p)
	return len(p), nil
}
