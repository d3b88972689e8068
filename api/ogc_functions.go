// ogc_functions.go: /ogc/functions, the functions a CQL2 filter may call
// (CQL2's functions class; Features Part 3 lists them at /functions).
package api

import (
	"net/http"
	"strconv"
	"strings"

	"mapcommons"
)

// relFunctions links the list of functions (Features Part 3).
const relFunctions = "http://www.opengis.net/def/rel/ogc/1.0/functions"

// ogcFunctionArg is an argument of a function: the types it takes.
type ogcFunctionArg struct {
	Title string   `json:"title"`
	Type  []string `json:"type"`
}

// ogcFunction is a function of /ogc/functions.
type ogcFunction struct {
	Name        string           `json:"name"`
	Description string           `json:"description"`
	Args        []ogcFunctionArg `json:"args"`
	Returns     []string         `json:"returns"`
}

// ogcFunctionsDoc is /ogc/functions.
type ogcFunctionsDoc struct {
	Functions []ogcFunction `json:"functions"`
	Links     []ogcLink     `json:"links"`
}

// ogcFunctionTypes are the types (of the standard's functions.yml) of an
// argument or result of one of mapcommons's types: a string argument
// takes dates and timestamps too (as their text).
func ogcFunctionTypes(t string, arg bool) []string {
	if t == mapcommons.LitString && arg {
		return []string{"string", "datetime"}
	}
	return []string{t}
}

// handleOGCFunctions answers GET /ogc/functions.
func (s *Server) handleOGCFunctions(w http.ResponseWriter, r *http.Request) error {
	f, err := ogcFormat(r)
	if err != nil {
		return err
	}
	if err := onlyParams(r); err != nil {
		return err
	}
	d := ogcFunctionsDoc{Functions: []ogcFunction{}, Links: s.selfLinks(r, "/functions", nil, f, ogcJSON)}
	page := &ogcPage{Title: "Functions", Description: "The functions a CQL2 filter may call (names in any case).",
		Links: d.Links, Columns: []string{"function", "arguments", "returns", "description"}}
	for _, fn := range mapcommons.Functions {
		o := ogcFunction{Name: fn.Name, Description: fn.Description, Returns: ogcFunctionTypes(fn.Returns, false)}
		var args []string
		for i, a := range fn.Args {
			arg := ogcFunctionArg{Title: "argument " + strconv.Itoa(i+1), Type: ogcFunctionTypes(a, true)}
			o.Args = append(o.Args, arg)
			args = append(args, strings.Join(arg.Type, " | "))
		}
		d.Functions = append(d.Functions, o)
		page.Rows = append(page.Rows, []string{fn.Name, strings.Join(args, ", "), strings.Join(o.Returns, " | "), fn.Description})
	}
	return s.ogcAnswer(w, r, f, ogcJSON, d, page)
}
