package ctxauditclickhouseexporter

import (
	"errors"

	"github.com/ClickHouse/clickhouse-go/v2"
	"go.opentelemetry.io/collector/consumer/consumererror"

	"github.com/ctxaudit/ctxaudit/schema/migrations"
)

// ClickHouse error codes that no retry of the same batch can fix while the
// collector runs with its configuration: the credentials are refused or the
// user may not write. They follow the OTLP exporter's convention, where
// Unauthenticated and PermissionDenied are not retried.
const (
	codeReadonly             = 164
	codeUnknownUser          = 192
	codeWrongPassword        = 193
	codeRequiredPassword     = 194
	codeAccessDenied         = 497
	codeAuthenticationFailed = 516
)

// permanentIfHopeless marks err as a permanent consumer error when retrying
// the batch cannot succeed, so exporterhelper drops it at once (and says so
// in its log and metrics) instead of blocking the queue until
// retry_on_failure.max_elapsed_time:
//
//   - the database was migrated by a newer ctxaudit (migrations.ErrDatabaseNewer):
//     this binary must be upgraded first;
//   - ClickHouse refused the credentials or the right to write.
//
// Everything else stays retryable, notably an unreachable server, a missing
// database or a schema older than this binary (create_schema: false): those
// are fixed by starting ClickHouse or running `ctxaudit migrate`, without a
// restart of the collector, and the next retry then succeeds.
func permanentIfHopeless(err error) error {
	if err == nil || consumererror.IsPermanent(err) {
		return err
	}
	if errors.Is(err, migrations.ErrDatabaseNewer) {
		return consumererror.NewPermanent(err)
	}
	var ex *clickhouse.Exception
	if errors.As(err, &ex) {
		switch ex.Code {
		case codeReadonly, codeUnknownUser, codeWrongPassword, codeRequiredPassword, codeAccessDenied, codeAuthenticationFailed:
			return consumererror.NewPermanent(err)
		}
	}
	return err
}
