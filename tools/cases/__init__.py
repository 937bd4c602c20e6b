"""cases: the tests' expected values that export_fixtures.py does not write,
and the checks the tests run (README.md). Each module is a program; the
package is imported for extract_book_blocks (the book's printed blocks),
which the view reads too."""
