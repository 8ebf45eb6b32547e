package system_test

import (
	"net/http"
	"testing"
)

func TestSmokeCreateCardAndReadItBack(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	a := s.createAccount(t, "base")
	key := s.createKey(t, a, "write")
	r := do(t, "POST", s.URL+"/v1/portfolio/cards", key, map[string]any{"address": "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "name": "genesis"})
	expect(t, r, http.StatusCreated, "")
	card := r.JSON(t)["card"].(map[string]any)
	if card["effective_access"] != "write" {
		t.Fatalf("agent-created card has effective_access %v, want write", card["effective_access"])
	}
	r = do(t, "GET", s.URL+"/v1/portfolio/cards/"+card["id"].(string), key, nil)
	expect(t, r, http.StatusOK, "")
	if got := r.JSON(t)["card"].(map[string]any)["name"]; got != "genesis" {
		t.Fatalf("name %v, want genesis", got)
	}
}
