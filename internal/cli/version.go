package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/ctxaudit/ctxaudit/schema/migrations"
)

// Set at build time: -ldflags "-X github.com/ctxaudit/ctxaudit/internal/cli.Version=… -X ….Commit=…".
var (
	Version = "dev"
	Commit  = "unknown"
)

// dependencyVersions lists the modules whose versions `ctxaudit version`
// reports, read from the binary's own build info so they are what was linked.
var dependencyVersions = []struct{ label, module string }{
	{"collector", "go.opentelemetry.io/collector/otelcol"},
	{"pdata", "go.opentelemetry.io/collector/pdata"},
	{"otel", "go.opentelemetry.io/otel"},
	{"clickhouse-go", "github.com/ClickHouse/clickhouse-go/v2"},
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and the versions of the libraries built in",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "ctxaudit %s\n", Version)
			commit := Commit
			deps := map[string]string{}
			if info, ok := debug.ReadBuildInfo(); ok {
				for _, d := range info.Deps {
					v := d.Version
					if d.Replace != nil {
						v = d.Replace.Version
					}
					deps[d.Path] = v
				}
				if commit == "unknown" {
					for _, s := range info.Settings {
						if s.Key == "vcs.revision" {
							commit = s.Value
						}
					}
				}
			}
			fmt.Fprintf(w, "  commit:         %s\n", commit)
			fmt.Fprintf(w, "  go:             %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
			fmt.Fprintf(w, "  schema:         %d\n", migrations.Latest())
			for _, d := range dependencyVersions {
				v := deps[d.module]
				if v == "" {
					v = "(not linked)"
				}
				fmt.Fprintf(w, "  %-15s %s %s\n", d.label+":", d.module, v)
			}
			return nil
		},
	}
}
