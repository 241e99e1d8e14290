// Package dashboards holds ctxaudit's Grafana dashboards (json/) and the
// provisioning files for the official ClickHouse data source plugin
// (provisioning/), embedded so that tools can export them. The dashboards are
// hand-maintained JSON; docs/grafana.md explains them and how to install them.
//
// The tests in this directory check every dashboard's structure and run every
// panel's and variable's SQL — macros and variables expanded exactly as
// Grafana and the plugin do (see internal/grafana) — against a real ClickHouse.
package dashboards

import "embed"

// DataSourceUID is the uid of the provisioned ClickHouse data source; every
// panel, target and query variable references it.
const DataSourceUID = "ctxaudit-clickhouse"

// DataSourceType is the official ClickHouse plugin's id.
const DataSourceType = "grafana-clickhouse-datasource"

// Files holds json/*.json and provisioning/**.yaml.
//
//go:embed json/*.json provisioning/datasources/*.yaml provisioning/dashboards/*.yaml
var Files embed.FS
