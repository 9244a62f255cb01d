"""Loyalty points (DESIGN §18): the company's programme, customers' points earned on
sales, redeemed as a tender, taken back by returns and voids, each beside 21400."""
