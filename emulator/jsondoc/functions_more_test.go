package jsondoc

import "testing"

// The examples of Learn's pages for the string, array, object and mathematical
// functions (github.com/Azure-Samples/cosmos-db-nosql-query-samples scripts/<name>,
// and the StringJoin, StringSplit and ARRAY_CONTAINS_ANY pages' inline examples).
func TestSystemFunctionsAnswerLearnsExamples(t *testing.T) {
	const aw = `"AdventureWorks"`
	for _, tt := range []struct{ expr, want string }{
		{`IIF(true, 123, 456)`, `123`},
		{`IIF(false, 123, 456)`, `456`},
		{`IIF(123, 123, 456)`, `456`},
		{`IIF("ABC", 123, 456)`, `456`},
		{`IIF([1,2,3], 123, 456)`, `456`},
		{`IIF({"name": "Alice", "age": 20}, 123, 456)`, `456`},
		{`IIF(c.missing, 1, 2)`, `2`},

		{`LENGTH(` + aw + `)`, `14`},
		{`LENGTH("")`, `0`},
		{`LENGTH(null)`, `undefined`},
		{`LENGTH(0)`, `undefined`},
		{`LENGTH(["Adventure", "Works"])`, `undefined`},
		{`[LEFT(` + aw + `, 0), LEFT(` + aw + `, 1), LEFT(` + aw + `, 5), LEFT(` + aw + `, LENGTH(` + aw + `)), LEFT(` + aw + `, 100)]`,
			`["","A","Adven","AdventureWorks","AdventureWorks"]`},
		{`[RIGHT(` + aw + `, 0), RIGHT(` + aw + `, 1), RIGHT(` + aw + `, 5), RIGHT(` + aw + `, LENGTH(` + aw + `)), RIGHT(` + aw + `, 100)]`,
			`["","s","Works","AdventureWorks","AdventureWorks"]`},
		{`[SUBSTRING(` + aw + `, 0, 9), SUBSTRING(` + aw + `, 9, 5), SUBSTRING(` + aw + `, 0, LENGTH(` + aw + `)), SUBSTRING(` + aw + `, 0, -1)]`,
			`["Adventure","Works","AdventureWorks",""]`},
		{`[INDEX_OF(` + aw + `, "A"), INDEX_OF(` + aw + `, "s"), INDEX_OF(` + aw + `, "Adventure"), INDEX_OF(` + aw + `, "Works"), INDEX_OF(` + aw + `, "tureW"), ` +
			`INDEX_OF(` + aw + `, "Cosmos"), INDEX_OF(` + aw + `, "Works", 5), INDEX_OF(` + aw + `, "Adventure", 5), INDEX_OF(` + aw + `, "aD")]`,
			`[0,13,0,9,5,-1,9,-1,-1]`},
		{`[REVERSE(` + aw + `), REVERSE("skroWerutnevdA"), REVERSE(REVERSE(` + aw + `))]`, `["skroWerutnevdA","AdventureWorks","AdventureWorks"]`},
		{`REPLICATE("Cosmic", 3)`, `"CosmicCosmicCosmic"`},
		{`[TRIM("   AdventureWorks"), TRIM("AdventureWorks   "), TRIM("   AdventureWorks   "), TRIM("---AdventureWorks---")]`,
			`["AdventureWorks","AdventureWorks","AdventureWorks","---AdventureWorks---"]`},
		{`[TRIM("___AdventureWorks___", "_"), TRIM("---AdventureWorks---", "-"), TRIM("-- AdventureWorks --", "-"), TRIM("-_-AdventureWorks-_-", "-_")]`,
			`["AdventureWorks","AdventureWorks"," AdventureWorks ","AdventureWorks"]`},
		{`[LTRIM("  AdventureWorks"), LTRIM("  AdventureWorks  "), LTRIM("AdventureWorks  "), LTRIM("AdventureWorks"), LTRIM(` + aw + `, "Works"), ` +
			`LTRIM(` + aw + `, "Adventure"), LTRIM(` + aw + `, ` + aw + `), LTRIM(` + aw + `, "")]`,
			`["AdventureWorks","AdventureWorks  ","AdventureWorks  ","AdventureWorks","AdventureWorks","Works","","AdventureWorks"]`},
		{`[STRINGEQUALS(` + aw + `, ` + aw + `), STRINGEQUALS(` + aw + `, "adventureworks"), STRINGEQUALS(` + aw + `, "adventureworks", true)]`, `[true,false,true]`},
		{`[StringJoin(["Iropa", "Mountain", "Bike"], " "), StringJoin(["Iropa", "Mountain", "Bike"], ""), StringJoin(["6", "7", "4", "3"], "A"), StringJoin(["Adventure", "LT"], "Works")]`,
			`["Iropa Mountain Bike","IropaMountainBike","6A7A4A3","AdventureWorksLT"]`},
		{`StringJoin(["Iropa", "Mountain", "Bike"], undefined)`, `undefined`},
		{`[StringSplit("Handlebar", "e"), StringSplit("CARBON_STEEL_BIKE_WHEEL", "_"), StringSplit("Road Bike", " "), StringSplit("xenmoun mountain bike", "moun"), StringSplit("Helmet", ""), StringSplit("", "")]`,
			`[["Handl","bar"],["CARBON","STEEL","BIKE","WHEEL"],["Road","Bike"],["xen"," ","tain bike"],["Helmet"],[""]]`},
		{`StringSplit("AluminumBikeFrame", undefined)`, `undefined`},
		{`[StringToArray("[]"), StringToArray('[ "coats", "gloves", "hats" ]'), StringToArray('[ [ "coats", "gloves" ], [ "hats" ] ]')]`,
			`[[],["coats","gloves","hats"],[["coats","gloves"],["hats"]]]`},
		{`[StringToArray("[ 'coats', 'gloves', 'hats' ]"), StringToArray(null)]`, `[]`},
		{`[StringToBoolean("true"), StringToBoolean("true  "), StringToBoolean("  false"), StringToBoolean(true)]`, `[true,true,false]`},
		{`[StringToNull("null"), StringToNull("  null  "), StringToNull("NULL"), StringToNull(null)]`, `[null,null]`},
		{`[StringToNumber("100"), StringToNumber("3.14"), StringToNumber("   60   "), StringToNumber("-1.79769e+308"), StringToNumber("Hello")]`, `[100,3.14,60,-1.79769e+308]`},
		{`[StringToObject("{}"), StringToObject('{"isAvailable": true}'), StringToObject("{'price': 27.55}")]`, `[{},{"isAvailable":true}]`},

		{`ARRAY_CONCAT(["apples", "strawberries"], ["bananas"])`, `["apples","strawberries","bananas"]`},
		{`ARRAY_CONTAINS_ANY([1, true, "3", [1,2,3]], 1, true, "3", [1,2,3])`, `true`},
		{`ARRAY_CONTAINS_ANY([1, 2, 3, 4], 2, 3, 4, 5)`, `true`},
		{`ARRAY_CONTAINS_ANY([1, 2, 3, 4], 1, undefined)`, `true`},
		{`ARRAY_CONTAINS_ANY([1, 2, 3, 4], 5, 6, 7, 8)`, `false`},
		{`ARRAY_CONTAINS_ANY([], 1, 2, 3)`, `false`},
		{`ARRAY_CONTAINS_ANY([1, 2, 3, 4], 5, undefined)`, `undefined`},
		{`ARRAY_CONTAINS_ALL([1, true, "3", [1,2,3]], 1, true, "3", [1,2,3])`, `true`},
		{`ARRAY_CONTAINS_ALL([1, 2, 3, 4], 2, 3, 4, 5)`, `false`},
		{`ARRAY_CONTAINS_ALL([1, 2, 3, 4], 1, undefined)`, `undefined`},
		{`ARRAY_CONTAINS_ALL([1, 2, 3, 4], 5, 6, 7, 8)`, `false`},
		{`ARRAY_CONTAINS_ALL([], 1, 2, 3)`, `false`},
		{`ARRAY_CONTAINS_ALL([1, 2, 3, 4], 5, undefined)`, `false`},
		{`ObjectToArray({"a": "12345", "b": "67890"})`, `[{"k":"a","v":"12345"},{"k":"b","v":"67890"}]`},
		{`ObjectToArray({"a": "12345", "b": "67890"}, "key", "value")`, `[{"key":"a","value":"12345"},{"key":"b","value":"67890"}]`},
		{`CHOOSE(1, "adventure", "works", true, [1])`, `"adventure"`},
		{`[CHOOSE(4, "adventure", "works", true, [1]), CHOOSE(5, "a"), CHOOSE(0, "a")]`, `[[1]]`},

		{`[IS_INTEGER(3454.123), IS_INTEGER(5523432), IS_INTEGER(-9223372036854775808), IS_INTEGER(9223372036854775807), IS_INTEGER(18446744073709551615)]`,
			`[false,true,true,true,false]`},
		{`[IS_FINITE_NUMBER(1234.567), IS_FINITE_NUMBER(8.9 / 0.0), IS_FINITE_NUMBER(SQRT(-1.0))]`, `[true,false,false]`},
		{`[NumberBin(37.752, -100), NumberBin(37.752, 10), NumberBin(37.752, 1), NumberBin(37.752, 0), NumberBin(37.752, 0.1), NumberBin(37.752, 0.01)]`,
			`[100,30,37,37.7,37.75]`},
		{`[TRUNC(2.37), TRUNC(-2.78), TRUNC(2), TRUNC(0.0000714), TRUNC(PI())]`, `[2,-2,2,0,3]`},
		{`[SIGN(-2), SIGN(-1), SIGN(0), SIGN(1), SIGN(2), SIGN(-0.5)]`, `[-1,-1,0,1,1,-1]`},
		{`[POWER(1, 1), POWER(2, 2), POWER(3, 3), POWER(4, 4), POWER(5, 5), POWER(0, 2), POWER(null, 3), POWER(2, null)]`, `[1,4,27,256,3125,0]`},
		{`[SQRT(0), SQRT(1), SQRT(4), SQRT(17), SQRT(25)]`, `[0,1,2,4.123105625617661,5]`},
		{`[SQUARE(0), SQUARE(1), SQUARE(2), SQUARE(3), SQUARE(null)]`, `[0,1,4,9]`},
		{`[LOG(5), LOG(2, 10)]`, `[1.6094379124341003,0.3010299956639812]`},
		// LOG10(5) is 0.6989700043360189 in Learn's example; Go's math.Log10 answers
		// 0.6989700043360187, one unit in the last place lower (README).
		{`[LOG10(2), LOG10(100)]`, `[0.3010299956639812,2]`},
		{`[EXP(0), EXP(10), EXP(20)]`, `[1,22026.465794806718,485165195.4097903]`},
		{`PI()`, `3.141592653589793`},
		{`ATN2(35.175643, 129.44)`, `0.265344532064832`},
	} {
		if got := valueOf(t, tt.expr); got != tt.want {
			t.Errorf("%s = %s, want %s", tt.expr, got, tt.want)
		}
	}
}

// Positions and lengths in UTF-16 code units (strings16.go): issue 24's
// LENGTH('😀smile') is 7, and every positional function agrees with it.
func TestStringFunctionsCountUTF16CodeUnits(t *testing.T) {
	for _, tt := range []struct{ expr, want string }{
		{`LENGTH("😀smile")`, `7`},
		{`LENGTH("ｆｕｌｌ")`, `4`}, // full-width letters are in the BMP: one unit each
		{`LENGTH("é")`, `1`},
		{`SUBSTRING("😀smile", 2, 5)`, `"smile"`},
		{`SUBSTRING("😀smile", 0, 2)`, `"😀"`},
		{`LEFT("😀smile", 3)`, `"😀s"`},
		{`RIGHT("smile😀", 2)`, `"😀"`},
		{`INDEX_OF("😀smile", "s")`, `2`},
		{`INDEX_OF("a😀b😀", "😀", 2)`, `4`},
		{`INDEX_OF("😀smile", "m", 3)`, `3`},
		{`REVERSE("a😀b")`, `"b😀a"`},
		// Half a pair cannot be held in a Go string: it becomes U+FFFD.
		{`LEFT("😀smile", 1)`, "\"\ufffd\""},
		{`REPLICATE("😀", 5001)`, `undefined`}, // 10,000 code units is the most
		{`LENGTH(REPLICATE("😀", 5000))`, `10000`},
		{`LENGTH(REPLICATE("😀", 4999))`, `9998`},
		{`REPLICATE("x", -1)`, `undefined`},
	} {
		if got := valueOf(t, tt.expr); got != tt.want {
			t.Errorf("%s = %s, want %s", tt.expr, got, tt.want)
		}
	}
}
