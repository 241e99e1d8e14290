package ctxauditclickhouseexporter

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

func pcommonTS(t time.Time) pcommon.Timestamp { return pcommon.NewTimestampFromTime(t) }
