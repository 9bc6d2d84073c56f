package main

import (
	"fmt"
	"net/http"
	"os"

	"github.com/spf13/cobra"

	"github.com/oncehq/once/adapters/httpapi"
)

// openapiCmd prints the spec from the same registration code the server
// runs, so the committed document cannot describe another API.
func openapiCmd() *cobra.Command {
	var version, out string
	cmd := leafCommand("openapi", "Print the OpenAPI document generated from the code", func(cmd *cobra.Command) error {
		api := httpapi.NewAPI(http.NewServeMux(), httpapi.Deps{})
		var doc []byte
		var err error
		switch version {
		case "3.1":
			doc, err = api.OpenAPI().YAML()
		case "3.0":
			// For generators that do not read 3.1 yet (oapi-codegen).
			doc, err = httpapi.Spec30YAML(api)
		default:
			return fmt.Errorf("--spec-version must be 3.1 or 3.0")
		}
		if err != nil {
			return err
		}
		if out == "" || out == "-" {
			_, err = cmd.OutOrStdout().Write(doc)
			return err
		}
		return os.WriteFile(out, doc, 0o644)
	})
	cmd.Flags().StringVar(&version, "spec-version", "3.1", "OpenAPI version: 3.1 or 3.0")
	cmd.Flags().StringVarP(&out, "output", "o", "-", "file to write, - for standard output")
	return cmd
}
