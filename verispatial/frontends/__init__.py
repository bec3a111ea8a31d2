"""Front ends: read a program written in a vendor's language and write an ordinary program.json whose ops carry the
user's file:line (DESIGN §12). A front end is untrusted: the checker judges what it writes."""
