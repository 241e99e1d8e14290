package agenttranscriptsreceiver

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/goleak"

	"github.com/ctxaudit/ctxaudit/collector/receiver/agenttranscriptsreceiver/internal/metadata"
)

func TestFactory(t *testing.T) {
	f := NewFactory()
	assert.Equal(t, "agenttranscripts", f.Type().String())
	assert.Equal(t, component.StabilityLevelAlpha, f.TracesStability())
	rcv, err := f.CreateTraces(context.Background(), receivertest.NewNopSettings(metadata.Type), f.CreateDefaultConfig(), consumertest.NewNop())
	require.NoError(t, err)
	require.NotNil(t, rcv)
	_, err = f.CreateLogs(context.Background(), receivertest.NewNopSettings(metadata.Type), f.CreateDefaultConfig(), consumertest.NewNop())
	assert.Error(t, err, "traces only")
}

func TestLifecycle(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	root := t.TempDir()
	copyTree(t, fixture216(t), root)
	f := NewFactory()

	t.Run("shutdown before start", func(t *testing.T) {
		rcv, err := f.CreateTraces(context.Background(), receivertest.NewNopSettings(metadata.Type), testConfig(root), consumertest.NewNop())
		require.NoError(t, err)
		require.NoError(t, rcv.Shutdown(context.Background()))
	})
	t.Run("start, shutdown twice", func(t *testing.T) {
		sink := new(consumertest.TracesSink)
		rcv, err := f.CreateTraces(context.Background(), receivertest.NewNopSettings(metadata.Type), testConfig(root), sink)
		require.NoError(t, err)
		require.NoError(t, rcv.Start(context.Background(), componenttest.NewNopHost()))
		require.Eventually(t, func() bool { return sink.SpanCount() > 0 }, waitFor, 10*time.Millisecond)
		require.NoError(t, rcv.Shutdown(context.Background()))
		require.NoError(t, rcv.Shutdown(context.Background()))
	})
	t.Run("shutdown while the pipeline refuses", func(t *testing.T) {
		sink := &flakySink{refuse: 1 << 30}
		rcv, err := f.CreateTraces(context.Background(), receivertest.NewNopSettings(metadata.Type), testConfig(root), sink)
		require.NoError(t, err)
		require.NoError(t, rcv.Start(context.Background(), componenttest.NewNopHost()))
		require.Eventually(t, func() bool { return sink.Calls() >= 2 }, waitFor, 10*time.Millisecond)
		require.NoError(t, rcv.Shutdown(context.Background()))
	})
	t.Run("storage extension not found", func(t *testing.T) {
		cfg := testConfig(root)
		id := component.MustNewID("file_storage")
		cfg.StorageID = &id
		rcv, err := f.CreateTraces(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
		require.NoError(t, err)
		err = rcv.Start(context.Background(), componenttest.NewNopHost())
		require.ErrorContains(t, err, `storage: extension "file_storage" not found`)
		require.NoError(t, rcv.Shutdown(context.Background()))
	})
	t.Run("extension is not a storage", func(t *testing.T) {
		cfg := testConfig(root)
		id := component.MustNewID("health_check")
		cfg.StorageID = &id
		rcv, err := f.CreateTraces(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
		require.NoError(t, err)
		notStorage := struct {
			component.StartFunc
			component.ShutdownFunc
		}{}
		err = rcv.Start(context.Background(), host{ext: map[component.ID]component.Component{id: notStorage}})
		require.ErrorContains(t, err, "is not a storage extension")
	})
}
