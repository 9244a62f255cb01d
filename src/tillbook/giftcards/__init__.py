"""Gift cards and store credit (DESIGN §18): balances the shop owes, kept beside
21300 Gift Cards and Store Credit so that the account always equals their sum."""
