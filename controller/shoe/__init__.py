"""The shoe's cards: card codes and values, the inventory of a shoe, the integrity watch over the
read order, and shoe files."""
