package faults

import "testing"

func TestOperationPatternsCoverTheirMembers(t *testing.T) {
	tests := []struct {
		pattern, op string
		want        bool
	}{
		{"read", "read", true},
		{"read", "query", false},
		{"reads", "read", true},
		{"reads", "query", true},
		{"reads", "create", false},
		{"writes", "create", true},
		{"writes", "upsert", true},
		{"writes", "replace", true},
		{"writes", "delete", true},
		{"writes", "patch", true},
		{"writes", "read", false},
		{"writes", "metadata", false},
		{"all", "addresses", true},
		{"all", "account", true},
		{"pkranges", "pkranges", true},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+"/"+tt.op, func(t *testing.T) {
			if got := OperationMatches(tt.pattern, tt.op); got != tt.want {
				t.Fatalf("OperationMatches(%q, %q) = %v, want %v", tt.pattern, tt.op, got, tt.want)
			}
		})
	}
}

func TestValidOperationAcceptsOperationsAndGroups(t *testing.T) {
	for _, s := range []string{"read", "query", "create", "upsert", "replace", "delete", "patch",
		"account", "pkranges", "metadata", "addresses", "all", "reads", "writes"} {
		if !ValidOperation(s) {
			t.Errorf("ValidOperation(%q) = false, want true", s)
		}
	}
	for _, s := range []string{"", "Read", "get", "write"} {
		if ValidOperation(s) {
			t.Errorf("ValidOperation(%q) = true, want false", s)
		}
	}
}

func TestSameRegionIgnoresCaseAndSpaces(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"East US", "eastus", true},
		{"EAST us", "East US", true},
		{"eastus", " East  US ", true},
		{"East US", "East US 2", false},
		{"West US", "eastus", false},
	}
	for _, tt := range tests {
		t.Run(tt.a+"|"+tt.b, func(t *testing.T) {
			if got := SameRegion(tt.a, tt.b); got != tt.want {
				t.Fatalf("SameRegion(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}
