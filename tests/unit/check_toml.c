/*
 * check_toml.c - the TOML 1.0 reader: valid documents read to the expected
 * tree, invalid ones fail at the expected line, positions of values.
 *
 * Cases written from the TOML 1.0 specification (toml.io/en/v1.0.0), in the
 * manner of toml-test's valid/ and invalid/ directories (one feature per
 * case: keys, strings, integers, floats, booleans, date-times, arrays,
 * tables, inline tables, arrays of tables).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "util/toml.h"

static json_t *load_ok(const char *text, struct eb_toml_doc **doc)
{
	struct eb_error *err = NULL;
	int r = eb_toml_load(doc, "t.toml", text, strlen(text), &err);
	ck_assert_msg(r == 0, "load failed: %s at %u:%u\n%s", err ? err->msg : "?",
		      err ? err->line : 0, err ? err->col : 0, text);
	return eb_toml_root(*doc);
}

/* valid: TOML text and the compact, key-sorted JSON of its tree */
static const struct {
	const char *toml, *json;
} valid[] = {
	/* keys */
	{ "key = \"value\"\nbare_key = 1\nbare-key = 2\n1234 = 3\n",
	  "{\"1234\":3,\"bare-key\":2,\"bare_key\":1,\"key\":\"value\"}" },
	{ "\"127.0.0.1\" = \"v\"\n\"character encoding\" = \"v\"\n'key2' = \"v\"\n'quoted \"value\"' = \"v\"\n",
	  "{\"127.0.0.1\":\"v\",\"character encoding\":\"v\",\"key2\":\"v\",\"quoted \\\"value\\\"\":\"v\"}" },
	{ "\"\" = \"blank\"\n", "{\"\":\"blank\"}" },
	{ "name = \"Orange\"\nphysical.color = \"orange\"\nphysical.shape = \"round\"\nsite.\"google.com\" = true\n",
	  "{\"name\":\"Orange\",\"physical\":{\"color\":\"orange\",\"shape\":\"round\"},\"site\":{\"google.com\":true}}" },
	{ "fruit.name = \"banana\"     # this is best practice\nfruit. color = \"yellow\"    # same as fruit.color\nfruit . flavor = \"banana\"   # same as fruit.flavor\n",
	  "{\"fruit\":{\"color\":\"yellow\",\"flavor\":\"banana\",\"name\":\"banana\"}}" },
	{ "3.14159 = \"pi\"\n", "{\"3\":{\"14159\":\"pi\"}}" },
	{ "apple.type = \"fruit\"\norange.type = \"fruit\"\napple.skin = \"thin\"\n",
	  "{\"apple\":{\"skin\":\"thin\",\"type\":\"fruit\"},\"orange\":{\"type\":\"fruit\"}}" },
	/* strings */
	{ "s = \"I'm a string. \\\"You can quote me\\\". Name\\tJos\\u00E9\\nLocation\\tSF.\"\n",
	  "{\"s\":\"I'm a string. \\\"You can quote me\\\". Name\\tJos\xc3\xa9\\nLocation\\tSF.\"}" },
	{ "s = \"\\U0001F600 \\b\\f\\r\\\\\"\n", "{\"s\":\"\xf0\x9f\x98\x80 \\b\\f\\r\\\\\"}" },
	{ "s = \"\"\"\nRoses are red\nViolets are blue\"\"\"\n",
	  "{\"s\":\"Roses are red\\nViolets are blue\"}" },
	{ "s = \"\"\"\r\nRoses\r\nViolets\"\"\"\r\n", "{\"s\":\"Roses\\nViolets\"}" },
	{ "s = \"\"\"\nThe quick brown \\\n\n\n  fox jumps over \\\n    the lazy dog.\"\"\"\n",
	  "{\"s\":\"The quick brown fox jumps over the lazy dog.\"}" },
	{ "s = \"\"\"\\\n       The quick brown \\   \n       fox.\\\n       \"\"\"\n",
	  "{\"s\":\"The quick brown fox.\"}" },
	{ "s = \"\"\"Here are two quotation marks: \"\". Simple enough.\"\"\"\n",
	  "{\"s\":\"Here are two quotation marks: \\\"\\\". Simple enough.\"}" },
	{ "s = \"\"\"Here are fifteen quotation marks: \"\"\\\"\"\"\\\"\"\"\\\"\"\"\\\"\"\"\\\".\"\"\"\n",
	  "{\"s\":\"Here are fifteen quotation marks: \\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\".\"}" },
	{ "s = \"\"\"\"This,\" she said, \"is just a pointless statement.\"\"\"\"\n",
	  "{\"s\":\"\\\"This,\\\" she said, \\\"is just a pointless statement.\\\"\"}" },
	{ "s = \"\"\"a\"\"\"\"\"\n", "{\"s\":\"a\\\"\\\"\"}" },
	{ "w = 'C:\\Users\\nodejs\\templates'\nq = 'Tom \"Dubs\" Preston-Werner'\n",
	  "{\"q\":\"Tom \\\"Dubs\\\" Preston-Werner\",\"w\":\"C:\\\\Users\\\\nodejs\\\\templates\"}" },
	{ "r = '''I [dw]on't need \\d{2} apples'''\nl = '''\nThe first newline is\ntrimmed.\n'''\n",
	  "{\"l\":\"The first newline is\\ntrimmed.\\n\",\"r\":\"I [dw]on't need \\\\d{2} apples\"}" },
	{ "q = ''''That,' she said, 'is still pointless.''''\n",
	  "{\"q\":\"'That,' she said, 'is still pointless.'\"}" },
	{ "t = \"a\tb\"\n", "{\"t\":\"a\\tb\"}" },
	/* integers */
	{ "a = +99\nb = 42\nc = 0\nd = -17\ne = 1_000\nf = 5_349_221\ng = 1_2_3_4_5\nh = -0\ni = +0\n",
	  "{\"a\":99,\"b\":42,\"c\":0,\"d\":-17,\"e\":1000,\"f\":5349221,\"g\":12345,\"h\":0,\"i\":0}" },
	{ "a = 0xDEADBEEF\nb = 0xdead_beef\nc = 0o01234567\nd = 0o755\ne = 0b11010110\nf = 0x00\n",
	  "{\"a\":3735928559,\"b\":3735928559,\"c\":342391,\"d\":493,\"e\":214,\"f\":0}" },
	{ "max = 9223372036854775807\nmin = -9223372036854775808\n",
	  "{\"max\":9223372036854775807,\"min\":-9223372036854775808}" },
	/* floats */
	{ "a = +1.0\nb = 3.1415\nc = -0.01\nd = 5e+22\ne = 1e06\nf = -2E-2\ng = 6.626e-34\nh = 224_617.445_991_228\n",
	  "{\"a\":1.0,\"b\":3.1415000000000002,\"c\":-0.01,\"d\":4.9999999999999996e22,\"e\":1000000.0,\"f\":-0.02,\"g\":6.6259999999999998e-34,\"h\":224617.44599122801}" },
	{ "a = inf\nb = +inf\nc = -inf\nd = nan\ne = +nan\nf = -nan\n",
	  "{\"a\":\"inf\",\"b\":\"+inf\",\"c\":\"-inf\",\"d\":\"nan\",\"e\":\"+nan\",\"f\":\"-nan\"}" },
	/* booleans */
	{ "t = true\nf = false\n", "{\"f\":false,\"t\":true}" },
	/* date-times (kept as written) */
	{ "a = 1979-05-27T07:32:00Z\nb = 1979-05-27T00:32:00-07:00\nc = 1979-05-27T00:32:00.999999-07:00\nd = 1979-05-27 07:32:00Z\n",
	  "{\"a\":\"1979-05-27T07:32:00Z\",\"b\":\"1979-05-27T00:32:00-07:00\",\"c\":\"1979-05-27T00:32:00.999999-07:00\",\"d\":\"1979-05-27 07:32:00Z\"}" },
	{ "a = 1979-05-27T07:32:00\nb = 1979-05-27\nc = 07:32:00\nd = 00:32:00.999999\ne = 2000-02-29\n",
	  "{\"a\":\"1979-05-27T07:32:00\",\"b\":\"1979-05-27\",\"c\":\"07:32:00\",\"d\":\"00:32:00.999999\",\"e\":\"2000-02-29\"}" },
	/* arrays */
	{ "integers = [ 1, 2, 3 ]\ncolors = [ \"red\", \"yellow\", \"green\" ]\nnested_arrays_of_ints = [ [ 1, 2 ], [3, 4, 5] ]\nnested_mixed_array = [ [ 1, 2 ], [\"a\", \"b\", \"c\"] ]\nstring_array = [ \"all\", 'strings', \"\"\"are the same\"\"\", '''type''' ]\n",
	  "{\"colors\":[\"red\",\"yellow\",\"green\"],\"integers\":[1,2,3],\"nested_arrays_of_ints\":[[1,2],[3,4,5]],\"nested_mixed_array\":[[1,2],[\"a\",\"b\",\"c\"]],\"string_array\":[\"all\",\"strings\",\"are the same\",\"type\"]}" },
	{ "numbers = [ 0.1, 0.2, 0.5, 1, 2, 5 ]\ncontributors = [\n  \"Foo Bar <foo@example.com>\",\n  { name = \"Baz Qux\", email = \"bazqux@example.com\", url = \"https://example.com/bazqux\" }\n]\n",
	  "{\"contributors\":[\"Foo Bar <foo@example.com>\",{\"email\":\"bazqux@example.com\",\"name\":\"Baz Qux\",\"url\":\"https://example.com/bazqux\"}],\"numbers\":[0.10000000000000001,0.20000000000000001,0.5,1,2,5]}" },
	{ "integers2 = [\n  1, 2, 3\n]\nintegers3 = [\n  1,\n  2, # this is ok\n]\nempty = [ # c\n]\n",
	  "{\"empty\":[],\"integers2\":[1,2,3],\"integers3\":[1,2]}" },
	/* tables */
	{ "[table-1]\nkey1 = \"some string\"\nkey2 = 123\n\n[table-2]\nkey1 = \"another string\"\nkey2 = 456\n",
	  "{\"table-1\":{\"key1\":\"some string\",\"key2\":123},\"table-2\":{\"key1\":\"another string\",\"key2\":456}}" },
	{ "[dog.\"tater.man\"]\ntype.name = \"pug\"\n", "{\"dog\":{\"tater.man\":{\"type\":{\"name\":\"pug\"}}}}" },
	{ "[a.b.c]            # this is best practice\n[ d.e.f ]          # same as [d.e.f]\n[ g .  h  . i ]    # same as [g.h.i]\n[ j . \"\xca\x9e\" . 'l' ]  # same as [j.\"\xca\x9e\".'l']\n",
	  "{\"a\":{\"b\":{\"c\":{}}},\"d\":{\"e\":{\"f\":{}}},\"g\":{\"h\":{\"i\":{}}},\"j\":{\"\xca\x9e\":{\"l\":{}}}}" },
	{ "[x.y.z.w]\n[x]\n", "{\"x\":{\"y\":{\"z\":{\"w\":{}}}}}" },
	{ "[fruit]\napple.color = \"red\"\napple.taste.sweet = true\n[fruit.apple.texture]\nsmooth = true\n",
	  "{\"fruit\":{\"apple\":{\"color\":\"red\",\"taste\":{\"sweet\":true},\"texture\":{\"smooth\":true}}}}" },
	{ "[animal]\n[fruit.apple]\n[fruit.orange]\n", "{\"animal\":{},\"fruit\":{\"apple\":{},\"orange\":{}}}" },
	{ "# top\n\n  key = 1 # trailing\n\t[t]  \n", "{\"key\":1,\"t\":{}}" },
	/* inline tables */
	{ "name = { first = \"Tom\", last = \"Preston-Werner\" }\npoint = { x = 1, y = 2 }\nanimal = { type.name = \"pug\" }\ne = {}\n",
	  "{\"animal\":{\"type\":{\"name\":\"pug\"}},\"e\":{},\"name\":{\"first\":\"Tom\",\"last\":\"Preston-Werner\"},\"point\":{\"x\":1,\"y\":2}}" },
	{ "a = { b = [\n 1,\n 2 ] }\n", "{\"a\":{\"b\":[1,2]}}" },
	/* arrays of tables */
	{ "[[products]]\nname = \"Hammer\"\nsku = 738594937\n\n[[products]]  # empty table within the array\n\n[[products]]\nname = \"Nail\"\nsku = 284758393\ncolor = \"gray\"\n",
	  "{\"products\":[{\"name\":\"Hammer\",\"sku\":738594937},{},{\"color\":\"gray\",\"name\":\"Nail\",\"sku\":284758393}]}" },
	{ "[[fruits]]\nname = \"apple\"\n[fruits.physical]\ncolor = \"red\"\n[[fruits.varieties]]\nname = \"red delicious\"\n[[fruits.varieties]]\nname = \"granny smith\"\n[[fruits]]\nname = \"banana\"\n[[fruits.varieties]]\nname = \"plantain\"\n",
	  "{\"fruits\":[{\"name\":\"apple\",\"physical\":{\"color\":\"red\"},\"varieties\":[{\"name\":\"red delicious\"},{\"name\":\"granny smith\"}]},{\"name\":\"banana\",\"varieties\":[{\"name\":\"plantain\"}]}]}" },
	{ "points = [ { x = 1, y = 2, z = 3 },\n           { x = 7, y = 8, z = 9 } ]\n",
	  "{\"points\":[{\"x\":1,\"y\":2,\"z\":3},{\"x\":7,\"y\":8,\"z\":9}]}" },
	/* odd but valid */
	{ "", "{}" },
	{ "\xef\xbb\xbf" "a = 1\n", "{\"a\":1}" },
	{ "a = 1", "{\"a\":1}" },
	{ "a = \"\xe2\x82\xac\" # \xe2\x82\xac in a comment\n", "{\"a\":\"\xe2\x82\xac\"}" },
	{ "true = 1\nfalse = 2\ninf = 3\nnan = 4\n", "{\"false\":2,\"inf\":3,\"nan\":4,\"true\":1}" },
};

/* invalid: TOML text and the line the error is reported on */
static const struct {
	const char *toml;
	unsigned line;
} invalid[] = {
	/* keys */
	{ "key = # INVALID\n", 1 },
	{ "first = \"Tom\" last = \"Preston-Werner\" # INVALID\n", 1 },
	{ "= \"no key name\"\n", 1 },
	{ "\"\"\"key\"\"\" = 1\n", 1 },
	{ "name = \"Tom\"\nname = \"Pradyun\"\n", 2 },
	{ "spelling = \"favorite\"\n\"spelling\" = \"favourite\"\n", 2 },
	{ "fruit.apple = 1\nfruit.apple.smooth = true\n", 2 },
	{ "a b = 1\n", 1 },
	{ "key\n= 1\n", 1 },
	{ "k\xc3\xa9y = 1\n", 1 },
	{ "a.\"\\u0000\" = 1\n", 1 },
	/* strings */
	{ "s = \"unterminated\n", 1 },
	{ "s = \"bad \\x escape\"\n", 1 },
	{ "s = \"\\uD800\"\n", 1 },
	{ "s = \"\\u00G0\"\n", 1 },
	{ "s = \"a\x01" "b\"\n", 1 },
	{ "s = 'a\nb'\n", 1 },
	{ "s = \"\"\"a\n\nb", 3 },
	{ "s = \"\"\"a\"\"\"\"\"\"\n", 1 },
	{ "s = '''a''''''\n", 1 },
	{ "s = \"\"\"\\ x\"\"\"\n", 1 },
	{ "s = \"\"\"a\x7f\"\"\"\n", 1 },
	/* integers */
	{ "i = 012\n", 1 },
	{ "i = 1__2\n", 1 },
	{ "i = _1\n", 1 },
	{ "i = 1_\n", 1 },
	{ "i = +0x1\n", 1 },
	{ "i = 0x\n", 1 },
	{ "i = 0o8\n", 1 },
	{ "i = 0b2\n", 1 },
	{ "i = 0X1\n", 1 },
	{ "i = 9223372036854775808\n", 1 },
	{ "i = 0x8000000000000000\n", 1 },
	{ "i = 1 2\n", 1 },
	/* floats */
	{ "f = .7\n", 1 },
	{ "f = 7.\n", 1 },
	{ "f = 3.e+20\n", 1 },
	{ "f = 1e\n", 1 },
	{ "f = 1.0_\n", 1 },
	{ "f = 01.5\n", 1 },
	{ "f = infinity\n", 1 },
	{ "f = NaN\n", 1 },
	{ "f = 1.2.3\n", 1 },
	{ "f = 1e999\n", 1 },
	{ "\nd =19_2e517\n", 2 }, /* found by fuzz/fuzz_toml.c */
	/* booleans */
	{ "b = True\n", 1 },
	{ "b = truee\n", 1 },
	/* date-times */
	{ "d = 1979-13-27\n", 1 },
	{ "d = 1979-02-30\n", 1 },
	{ "d = 2001-02-29\n", 1 },
	{ "d = 1979-05-27T25:00:00\n", 1 },
	{ "d = 1979-05-27T07:32\n", 1 },
	{ "d = 07:32\n", 1 },
	{ "d = 1979-05-27T07:32:00+7:00\n", 1 },
	{ "d = 1979-5-27\n", 1 },
	{ "d = 1979-05-27T07:32:00.\n", 1 },
	/* arrays */
	{ "a = [1, 2\n", 2 },
	{ "a = [1 2]\n", 1 },
	{ "a = [,]\n", 1 },
	{ "a = [1,,2]\n", 1 },
	/* inline tables */
	{ "t = { a = 1,\n b = 2 }\n", 1 },
	{ "t = { a = 1, }\n", 1 },
	{ "t = { a = 1, a = 2 }\n", 1 },
	{ "t = {a = 1}\nt.b = 2\n", 2 },
	{ "t = {a = {}}\n[t.a.b]\n", 2 },
	{ "t = { a.b = 1, a = {} }\n", 1 },
	{ "[product]\ntype = { name = \"Nail\" }\ntype.edible = false\n", 3 },
	{ "[product]\ntype.name = \"Nail\"\ntype = { edible = false }\n", 3 },
	/* tables */
	{ "[fruit]\napple = \"red\"\n[fruit]\norange = \"orange\"\n", 3 },
	{ "[fruit]\napple = \"red\"\n[fruit.apple]\ntexture = \"smooth\"\n", 3 },
	{ "[fruit]\napple.color = \"red\"\n[fruit.apple]\n", 3 },
	{ "[a.b.c]\n  z = 9\n[a]\n  b.c.t = 1\n", 4 },
	{ "[a.b.c.d]\n[a]\nb.c.d.k.t = 1\n", 3 },
	{ "a.b = 1\n[a]\n", 2 },
	{ "[]\n", 1 },
	{ "[a.]\n", 1 },
	{ "[a\n", 1 },
	{ "[a] b = 1\n", 1 },
	{ "[ [a] ]\n", 1 },
	{ "a = 1\n[a]\n", 2 },
	{ "[a]\n[a.b]\n[a]\n", 3 },
	/* arrays of tables */
	{ "fruits = []\n[[fruits]]\n", 2 },
	{ "[[fruits]]\nname = \"apple\"\n[fruits]\n", 3 },
	{ "[fruit.physical]\ncolor = \"red\"\n[[fruit]]\n", 3 },
	{ "[[fruit]\n", 1 },
	{ "a = [{}]\n[[a]]\n", 2 },
	{ "a = [{}]\n[a.b]\n", 2 },
	/* document */
	{ "a = 1\rb = 2\n", 1 },
	{ "a = \"\xff\"\n", 1 },
	{ "a = 1\n# comment \x01\n", 2 },
	{ "a = \"\xed\xa0\x80\"\n", 1 },
	{ "a = \"\xc0\xaf\"\n", 1 },
	{ "x\n", 1 },
	{ "a = 1\nb = @\n", 2 },
};

START_TEST(valid_docs)
{
	struct eb_toml_doc *doc = NULL;
	json_t *root = load_ok(valid[_i].toml, &doc);
	char *got = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
	ck_assert_msg(strcmp(got, valid[_i].json) == 0, "case %d:\n%s\ngot  %s\nwant %s", _i,
		      valid[_i].toml, got, valid[_i].json);
	free(got);
	eb_toml_free(doc);
}
END_TEST

START_TEST(invalid_docs)
{
	struct eb_toml_doc *doc = (struct eb_toml_doc *)1;
	struct eb_error *err = NULL;
	int r = eb_toml_load(&doc, "bad.toml", invalid[_i].toml, strlen(invalid[_i].toml), &err);

	ck_assert_msg(r == -EB_EINVALID, "case %d accepted:\n%s", _i, invalid[_i].toml);
	ck_assert_ptr_null(doc);
	ck_assert_ptr_nonnull(err);
	ck_assert_str_eq(err->file, "bad.toml");
	ck_assert_msg(err->line == invalid[_i].line, "case %d: error at line %u, want %u (%s)\n%s",
		      _i, err->line, invalid[_i].line, err->msg, invalid[_i].toml);
	ck_assert_uint_gt(err->col, 0);
	eb_error_free(err);
}
END_TEST

/* Types that JSON lacks are tagged in the side table. */
START_TEST(types)
{
	struct eb_toml_doc *doc = NULL;
	json_t *root = load_ok("a = 1979-05-27T07:32:00Z\nb = 1979-05-27T07:32:00\nc = 1979-05-27\n"
			       "d = 07:32:00\ne = nan\nf = 1.5\ng = 1\nh = true\ni = 's'\nj = []\n"
			       "k = {}\n", &doc);
	json_t *tagged = eb_toml_tagged(doc);
	char *s = json_dumps(tagged, JSON_COMPACT | JSON_SORT_KEYS);

	ck_assert_int_eq(eb_toml_value_pos(doc, root, "a", 0)->type, EB_TOML_DATETIME);
	ck_assert_int_eq(eb_toml_value_pos(doc, root, "b", 0)->type, EB_TOML_DATETIME_LOCAL);
	ck_assert_int_eq(eb_toml_value_pos(doc, root, "c", 0)->type, EB_TOML_DATE_LOCAL);
	ck_assert_int_eq(eb_toml_value_pos(doc, root, "d", 0)->type, EB_TOML_TIME_LOCAL);
	ck_assert_int_eq(eb_toml_value_pos(doc, root, "e", 0)->type, EB_TOML_FLOAT);
	ck_assert_int_eq(eb_toml_value_pos(doc, root, "f", 0)->type, EB_TOML_FLOAT);
	ck_assert_int_eq(eb_toml_value_pos(doc, root, "g", 0)->type, EB_TOML_INTEGER);
	ck_assert_int_eq(eb_toml_value_pos(doc, root, "h", 0)->type, EB_TOML_BOOL);
	ck_assert_int_eq(eb_toml_value_pos(doc, root, "i", 0)->type, EB_TOML_STRING);
	ck_assert_int_eq(eb_toml_value_pos(doc, root, "j", 0)->type, EB_TOML_ARRAY);
	ck_assert_int_eq(eb_toml_value_pos(doc, root, "k", 0)->type, EB_TOML_TABLE);
	ck_assert_ptr_null(eb_toml_value_pos(doc, root, "zz", 0));
	ck_assert_str_eq(s, "{\"a\":{\"type\":\"datetime\",\"value\":\"1979-05-27T07:32:00Z\"},"
			    "\"b\":{\"type\":\"datetime-local\",\"value\":\"1979-05-27T07:32:00\"},"
			    "\"c\":{\"type\":\"date-local\",\"value\":\"1979-05-27\"},"
			    "\"d\":{\"type\":\"time-local\",\"value\":\"07:32:00\"},"
			    "\"e\":{\"type\":\"float\",\"value\":\"nan\"},"
			    "\"f\":{\"type\":\"float\",\"value\":\"1.5\"},"
			    "\"g\":{\"type\":\"integer\",\"value\":\"1\"},"
			    "\"h\":{\"type\":\"bool\",\"value\":\"true\"},"
			    "\"i\":{\"type\":\"string\",\"value\":\"s\"},\"j\":[],\"k\":{}}");
	free(s);
	json_decref(tagged);
	eb_toml_free(doc);
}
END_TEST

/* Every value and key has its line and column, also in arrays, inline
 * tables, dotted keys and arrays of tables. */
START_TEST(positions)
{
	struct eb_toml_doc *doc = NULL;
	json_t *root = load_ok("[project]\n"
			       "name = \"x\"\n"
			       "dependencies = [\n"
			       "  \"numpy>=1\",\n"
			       "    'torch==2.1.0', # c\n"
			       "]\n"
			       "[project.optional-dependencies]\n"
			       "gpu = [\"cupy\"]\n"
			       "[[tool.x]]\n"
			       "a.b = { c = true }\n", &doc);
	json_t *project = json_object_get(root, "project");
	json_t *deps = json_object_get(project, "dependencies");
	json_t *tool_x = json_object_get(json_object_get(root, "tool"), "x");
	json_t *x0 = json_array_get(tool_x, 0);
	json_t *ab = json_object_get(json_object_get(x0, "a"), "b");
	const struct eb_toml_pos *p;

	p = eb_toml_value_pos(doc, project, "name", 0);
	ck_assert_uint_eq(p->line, 2);
	ck_assert_uint_eq(p->col, 8);
	ck_assert_uint_eq(p->key_line, 2);
	ck_assert_uint_eq(p->key_col, 1);
	p = eb_toml_value_pos(doc, deps, NULL, 0);
	ck_assert_uint_eq(p->line, 4);
	ck_assert_uint_eq(p->col, 3);
	p = eb_toml_value_pos(doc, deps, NULL, 1);
	ck_assert_uint_eq(p->line, 5);
	ck_assert_uint_eq(p->col, 5);
	ck_assert_ptr_null(eb_toml_value_pos(doc, deps, NULL, 2));
	p = eb_toml_node_pos(doc, deps);
	ck_assert_uint_eq(p->line, 3);
	ck_assert_uint_eq(p->col, 16);
	p = eb_toml_node_pos(doc, json_object_get(project, "optional-dependencies"));
	ck_assert_uint_eq(p->line, 7);
	ck_assert_uint_eq(p->col, 1);
	ck_assert_uint_eq(p->key_col, 10);
	p = eb_toml_value_pos(doc, json_object_get(json_object_get(project, "optional-dependencies"), "gpu"), NULL, 0);
	ck_assert_uint_eq(p->line, 8);
	ck_assert_uint_eq(p->col, 8);
	p = eb_toml_node_pos(doc, x0);
	ck_assert_uint_eq(p->line, 9);
	p = eb_toml_value_pos(doc, ab, "c", 0);
	ck_assert_uint_eq(p->line, 10);
	ck_assert_uint_eq(p->col, 13);
	ck_assert_uint_eq(p->key_col, 9);
	p = eb_toml_node_pos(doc, root);
	ck_assert_uint_eq(p->line, 1);
	eb_toml_free(doc);
}
END_TEST

/* A large document (a lock file's size) loads and looks up in linear time;
 * deep nesting is refused, not a stack overflow. */
START_TEST(large_and_deep)
{
	struct eb_toml_doc *doc = NULL;
	struct eb_error *err = NULL;
	size_t n = 20000, cap = n * 40 + 1, len = 0;
	char *text = malloc(cap);
	json_t *root;

	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, cap - len, "[[package]]\nname = \"p%zu\"\n", i);
	root = load_ok(text, &doc);
	ck_assert_uint_eq(json_array_size(json_object_get(root, "package")), n);
	ck_assert_uint_eq(eb_toml_value_pos(doc, json_array_get(json_object_get(root, "package"), n - 1),
					    "name", 0)->line, 2 * n);
	eb_toml_free(doc);

	len = (size_t)snprintf(text, cap, "a = ");
	for (size_t i = 0; i < 5000; i++)
		text[len++] = '[';
	text[len] = '\0';
	ck_assert_int_eq(eb_toml_load(&doc, "deep.toml", text, len, &err), -EB_EINVALID);
	ck_assert_ptr_nonnull(strstr(err->msg, "deeper"));
	eb_error_free(err);
	free(text);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("toml");
	TCase *tc = tcase_create("toml");

	tcase_add_loop_test(tc, valid_docs, 0, (int)(sizeof(valid) / sizeof(valid[0])));
	tcase_add_loop_test(tc, invalid_docs, 0, (int)(sizeof(invalid) / sizeof(invalid[0])));
	tcase_add_test(tc, types);
	tcase_add_test(tc, positions);
	tcase_add_test(tc, large_and_deep);
	suite_add_tcase(s, tc);
	return s;
}

EB_TEST_MAIN(make_suite)
