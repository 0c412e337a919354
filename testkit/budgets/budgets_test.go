package budgets_test

import (
	"os"
	"strings"
	"testing"

	"shipgraph/testkit/budgets"
)

// TestBudgetDocs: docs/scale.md's table is the one the tests' budgets
// render; a budget changed without `make budgets` fails here.
func TestBudgetDocs(t *testing.T) {
	b, err := os.ReadFile("../../docs/scale.md")
	if err != nil {
		t.Fatal(err)
	}
	out, ok := budgets.Replace(string(b))
	if !ok {
		t.Fatalf("docs/scale.md has no budget markers (%q … %q)", budgets.BeginMarker, budgets.EndMarker)
	}
	if out != string(b) {
		t.Errorf("docs/scale.md's statement budgets differ from testkit/budgets: run make budgets")
	}
	if !strings.Contains(budgets.Table(), "| `/v2/documents` | 3 |") {
		t.Errorf("the table renders no /v2/documents row:\n%s", budgets.Table())
	}
	seen := map[string]bool{}
	for _, x := range budgets.All {
		if seen[x.Key] || x.Max <= 0 || x.Test == "" {
			t.Errorf("budget %+v: a key twice, no budget or no test", x)
		}
		seen[x.Key] = true
	}
}
