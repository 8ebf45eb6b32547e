package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// printRaw writes a response body as the server sent it, for --json. An empty
// body (a 204) prints nothing, so the output is always valid JSON or empty.
func printRaw(w io.Writer, body []byte) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if _, err := w.Write(body); err != nil {
		return err
	}
	if body[len(body)-1] != '\n' {
		_, err := io.WriteString(w, "\n")
		return err
	}
	return nil
}

// printAnswer prints the server's answer: under --json the body as the
// server sent it (printRaw), else the line format makes of args.
func (a *app) printAnswer(body []byte, format string, args ...any) error {
	if a.globals.json {
		return printRaw(a.stdout, body)
	}
	_, err := fmt.Fprintf(a.stdout, format, args...)
	return err
}

// printPretty writes a JSON body indented for a human reader.
func printPretty(w io.Writer, body []byte) error {
	var out bytes.Buffer
	if err := json.Indent(&out, bytes.TrimSpace(body), "", "  "); err != nil {
		return fmt.Errorf("unexpected response from server: not JSON: %v", err)
	}
	out.WriteByte('\n')
	_, err := out.WriteTo(w)
	return err
}

// decodeResponse decodes a 2xx body into v. A body that does not decode means
// the server and the CLI disagree about the API, which is worth saying plainly.
func decodeResponse(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("unexpected response from server: %v", err)
	}
	return nil
}

// creationNotice tells the user that a secret just printed will not be shown
// again. It goes to stderr so stdout stays machine-readable.
func creationNotice(w io.Writer, what string) {
	fmt.Fprintf(w, "note: the %s is shown only once; store it now.\n", what)
}
