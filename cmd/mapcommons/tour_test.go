package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// tourLines are the commands of examples/tour.sh between its markers.
func tourLines(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../examples/tour.sh")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, "# --- tour ---\n"), strings.Index(s, "# --- end ---")
	if i < 0 || j < i {
		t.Fatal("examples/tour.sh lacks its markers")
	}
	return s[i+len("# --- tour ---\n") : j]
}

// TestREADMETour: the README's first session is examples/tour.sh, line for
// line, and the script runs cleanly against a real server on a new data
// directory, with the answers the README promises.
func TestREADMETour(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```sh\nBASE=http://127.0.0.1:8080\n"+tourLines(t)+"```") {
		t.Fatal("the README's first session is not examples/tour.sh: copy the lines between the script's markers into it")
	}
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	url, _ := startServer(t, nil)
	cmd := exec.Command("bash", "../../examples/tour.sh", url)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("tour.sh: %v\n%s\n%s", err, out.String(), errb.String())
	}
	for _, want := range []string{
		`"login":"ann"`,
		"HTTP/1.1 201 Created", "Location: " + url + "/datasets/1.json",
		`"type":"FeatureCollection"`, `"Vatican City"`, // the first five places, as GeoJSON
		`"The Hague"`, `"Bern"`, // within 500 km of Paris
		"/datasets/2.json", `"feature_count":100`, // the counties
		`"BIR74":21588`, // Mecklenburg, the most births
		`"title":"Places"`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the tour's output lacks %s:\n%s", want, out.String())
		}
	}
	if _, err := os.Stat("../../examples/counties.gpkg"); err == nil {
		t.Error("the tour left counties.gpkg behind")
	}
}
