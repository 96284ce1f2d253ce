package stageconfig

import (
	"reflect"
	"testing"
)

// Ports finds every setting named like a port at any depth, a number or
// the text of one, and leaves other text alone.
func TestSettingsPorts(t *testing.T) {
	_, st := stage0(t, `stage_args:
  - stage_id: 0
    engine_args:
      kv_transfer_config:
        kv_connector: P2pNcclConnector
        kv_port: 21001
        kv_connector_extra_config:
          proxy_ip: 10.0.0.9
          proxy_port: "30001"
          rpc_port: auto
          connectors:
            - {kv_connector: P2pNcclConnector, kv_port: 70000}
          huge_port: "99999999999999999999"
          not_a_port_at_all: 5
`)
	kv, err := st.MergedEngine("kv_transfer_config", map[string]any{"kv_connector_extra_config": map[string]any{"page_port": int64(8998)}})
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Path   string
		Port   int
		Number bool
	}
	var gs []got
	for _, p := range kv.Ports() {
		gs = append(gs, got{p.Path, p.Port, p.Number})
	}
	want := []got{
		{"kv_port", 21001, true},
		{"kv_connector_extra_config.proxy_port", 30001, true},
		{"kv_connector_extra_config.rpc_port", 0, false},
		{"kv_connector_extra_config.connectors.0.kv_port", 70000, true},
		{"kv_connector_extra_config.huge_port", -1, true},
		{"kv_connector_extra_config.page_port", 8998, true},
	}
	if !reflect.DeepEqual(gs, want) {
		t.Errorf("ports = %v\nwant    %v", gs, want)
	}
	if ip, _ := kv.Ports()[1].In.String("proxy_ip"); ip != "10.0.0.9" {
		t.Errorf("the proxy_port's neighbour proxy_ip = %q", ip)
	}
	for _, p := range kv.Ports() {
		if p.Connector != "P2pNcclConnector" {
			t.Errorf("%s configures %q, want P2pNcclConnector", p.Path, p.Connector)
		}
	}
	// The merge was on a copy.
	if st.KVTransferSettings().Get("kv_connector_extra_config").Has("page_port") {
		t.Error("MergedEngine changed the stage")
	}
}
