"""Who may do what at the table: accounts and PINs, roles and their rights, sign-in, and the
control socket (its server and its client)."""
