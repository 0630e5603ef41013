package engine

import (
	"slices"
	"strings"
)

// templateDef is a world template: its terrain step, the POIs it places and
// the text its places and pages are written from.
type templateDef struct {
	id, name, desc string
	terrain        func(c *gen)
	pois           []poiKind
	flavor         flavor
}

// templates lists the templates in the order Templates returns them.
var templates = []templateDef{
	{
		id: "starter-jungle", name: "Starter jungle",
		desc:    "Steaming jungle and forest over rolling hills, cut by rivers running down to lakes; shrines, ruins and camps.",
		terrain: jungleTerrain,
		pois: []poiKind{
			{cat: "shrine", tags: []string{"holy", "ancient"}, on: "jf", n: [3]int{1, 2, 3}, place: true, pick: true, minI: 1, maxI: 2,
				names: []string{"Shrine of the Jade Serpent", "Shrine of the Howling Ape", "Orchid Shrine", "Shrine of the Drowned Sun", "Moss-Eaten Shrine", "Shrine of Nine Frogs"},
				items: []string{"Jade Idol", "Carved Bone Fetish", "Incense Bundle", "Gold Offering Bowl"}},
			{cat: "ruin", tags: []string{"ancient", "explorable"}, on: "jh", n: [3]int{1, 2, 3}, place: true, pick: true, minI: 0, maxI: 1,
				names: []string{"Temple of Xal-Tuun", "Sunken Ziggurat", "Broken Causeway", "Vine-Choked Palace", "Observatory of Qel", "Stepped Pyramid of Ilo"},
				items: []string{"Obsidian Mask", "Star Chart Fragment", "Feathered Headdress"}},
			{cat: "camp", tags: []string{"rest", "explorers"}, on: "gf", n: [3]int{1, 1, 2}, place: true, pick: true, minI: 1, maxI: 3,
				names: []string{"Explorers' Camp", "Hunters' Lean-to", "Mapmakers' Rest", "Abandoned Camp"},
				items: []string{"Machete", "Coil of Rope", "Quinine Tonic", "Dried Rations"}},
			{cat: "crossing", tags: []string{"river", "travel"}, on: "s", n: [3]int{1, 2, 2}, anchorOnly: true,
				names: []string{"Rope Bridge", "Stone Ford", "Log Crossing", "Ferry Post"}},
			{cat: "cache", tags: []string{"hidden", "loot"}, on: "jf", n: [3]int{1, 2, 3}, gm: true, pick: true, open: true, minI: 1, maxI: 2,
				names: []string{"Smugglers' Cache", "Hollow Tree Cache", "Buried Strongbox"},
				items: []string{"Pouch of Emeralds", "Silver Ingot", "Antivenom", "Old Map"}},
			{cat: "lair", tags: []string{"danger", "beast"}, on: "jh", n: [3]int{1, 1, 2}, gm: true,
				names: []string{"Jaguar Den", "Giant Spider Nest", "Serpent Pit", "Ape Warren"}},
		},
		flavor: flavor{
			regions:     []string{"The Verdant Reach", "Jade Basin", "The Green Deep", "Qel's Forest"},
			areas:       []string{"Serpent Hills", "Orchid Vale", "Howling Canopy", "Riverlands", "Old Causeway", "Mistfalls", "Sunken Glade", "Parrot Coast"},
			intro:       "{region} is a steaming green maze of jungle and forest, cut by brown rivers that run down from the hills. The empire that built its temples here is gone; the vines have not forgotten it.",
			faction:     "The Jade Circle",
			factionText: "A society of explorers and relic hunters who fund expeditions into {region}. They pay well for maps and better for idols, and ask few questions about how either was found.",
			secret:      "The shrines are not abandoned. Something still answers prayers made at {poi1}, and it is hungry.",
			hookTitle:   "The Lost Expedition",
			hook:        "A Jade Circle expedition went into {region} three months ago and never came back. Their last runner came out of the trees near {poi2}, raving about a temple that moves.",
		},
	},
	{
		id: "starter-dungeon", name: "Starter dungeon",
		desc:    "Rooms and corridors carved from solid stone: doors, chests, traps, a flooded hall and an altar in the deepest room.",
		terrain: dungeonTerrain,
		pois: []poiKind{
			{cat: "stairs", tags: []string{"entrance", "exit"}, n: [3]int{1, 1, 1}, place: true, anchorOnly: true,
				names: []string{"Entrance Stair", "Spiral Stair"}},
			{cat: "altar", tags: []string{"holy", "boss"}, n: [3]int{1, 1, 1}, place: true, anchorOnly: true, pick: true, minI: 1, maxI: 2,
				names: []string{"Altar of the Hollow King", "Blood Altar", "Altar of Whispers"},
				items: []string{"Obsidian Dagger", "Black Candle", "Crown of the Hollow King"}},
			{cat: "pool", tags: []string{"water"}, n: [3]int{1, 1, 1}, place: true, anchorOnly: true,
				names: []string{"Flooded Hall", "Drowned Chapel", "Cistern"}},
			{cat: "door", tags: []string{"door"}, n: [3]int{3, 5, 8}, open: true, anchorOnly: true,
				names: []string{"Iron-Bound Door", "Rotting Oak Door", "Portcullis", "Sealed Stone Door", "Rusted Grate", "Bronze Door"}},
			{cat: "chest", tags: []string{"loot", "container"}, on: "n", n: [3]int{2, 3, 5}, pick: true, open: true, minI: 1, maxI: 3,
				names: []string{"Iron Chest", "Mouldering Coffer", "Gilded Chest", "Bone Reliquary", "Locked Strongbox"},
				items: []string{"Gold Coins", "Silver Chalice", "Healing Potion", "Scroll of Light", "Rusty Key", "Ruby Ring", "Dagger of Venom"}},
			{cat: "trap", tags: []string{"danger", "hidden"}, on: "n", n: [3]int{2, 3, 5}, gm: true,
				names: []string{"Pit Trap", "Poison Dart Plate", "Swinging Blade", "Collapsing Ceiling", "Glyph of Warding"}},
			{cat: "lair", tags: []string{"danger", "monster"}, on: "n", n: [3]int{1, 1, 2}, gm: true, place: true,
				names: []string{"Ogre's Den", "Rat King's Nest", "Ghoul Larder", "Kobold Barracks"}},
		},
		flavor: flavor{
			regions:     []string{"The Hollow Halls", "Vaults of the Hollow King", "The Undercroft", "Gravelgate Deeps"},
			areas:       []string{"Upper Galleries", "Old Barracks", "Crypt Wing", "Servants' Passages", "Echoing Halls", "Prison Level", "Chapel Wing", "Collapsed Wing"},
			intro:       "{region} were dug for a king who wanted to be buried with his army. The army is still down here, in a manner of speaking. Doors are heavy, corridors narrow, and the air smells of wet stone.",
			faction:     "The Gravediggers' Guild",
			factionText: "Licensed tomb-robbers who hold the charter to {region}. They sell maps of the upper levels, and buy anything that comes out of the lower ones.",
			secret:      "The king is not dead. The altar at {poi2} is a phylactery, and every chest taken from the halls weakens the seal.",
			hookTitle:   "Into the Hollow Halls",
			hook:        "The Gravediggers' Guild will pay a hundred crowns to anyone who maps the halls beyond {poi1} and returns with proof of what lies at {poi2}.",
		},
	},
	{
		id: "starter-city", name: "Starter city",
		desc:    "A walled city of streets and building blocks around a market square, with a park, a river and four gates; farmland outside.",
		terrain: cityTerrain,
		pois: []poiKind{
			{cat: "market", tags: []string{"trade"}, n: [3]int{1, 1, 1}, place: true, anchorOnly: true,
				names: []string{"Grand Market", "Market Square", "The Bazaar"}},
			{cat: "gate", tags: []string{"gate", "wall"}, n: [3]int{4, 4, 4}, open: true, anchorOnly: true,
				names: []string{"City Gate"}},
			{cat: "tavern", tags: []string{"rest", "rumours"}, on: "u", n: [3]int{1, 2, 4}, place: true, pick: true, minI: 0, maxI: 1,
				names: []string{"The Drunken Griffin", "The Gilded Tankard", "The Salty Eel", "The Sleeping Giant", "The Broken Wheel", "The Three Crowns"},
				items: []string{"Room Key", "Pewter Tankard"}},
			{cat: "shop", tags: []string{"trade"}, on: "u", n: [3]int{2, 3, 5}, pick: true, minI: 1, maxI: 2,
				names: []string{"Ironmonger's Forge", "Apothecary", "Cartographer's Shop", "Curio Dealer", "Fletcher", "Tailor"},
				items: []string{"Lantern", "Healing Salve", "City Map", "Longbow", "Fine Cloak", "Lockpicks"}},
			{cat: "temple", tags: []string{"holy"}, on: "u", n: [3]int{1, 1, 2}, place: true,
				names: []string{"Temple of the Dawn", "Cathedral of Saint Ilse", "Shrine of the Harbour Mother"}},
			{cat: "fountain", tags: []string{"water", "park"}, n: [3]int{1, 1, 1}, anchorOnly: true, pick: true, minI: 1, maxI: 1,
				names: []string{"Fountain of the Graces", "Old Well", "Wishing Well"},
				items: []string{"Handful of Copper Coins"}},
			{cat: "den", tags: []string{"crime", "hidden"}, on: "u", n: [3]int{1, 1, 2}, gm: true, pick: true, open: true, minI: 1, maxI: 2,
				names: []string{"Thieves' Den", "Smugglers' Cellar", "Cult Safehouse"},
				items: []string{"Forged Papers", "Stolen Signet Ring", "Coded Ledger"}},
		},
		flavor: flavor{
			regions:     []string{"Port Varrow", "Ilsebridge", "Greywater", "Kingsford"},
			areas:       []string{"Old Town", "Market Ward", "Temple Hill", "Riverside", "Tanners' Row", "Lantern Quarter", "Guild Ward", "Gate Ward"},
			intro:       "{region} is a walled city on a slow river: four gates, a market square at its heart and more taverns than temples. Farms and orchards press right up to the walls.",
			faction:     "The Lantern Watch",
			factionText: "The city watch of {region}, underpaid and overworked. Captain Orla Venn runs it from the gatehouse and pays for information in coin and favours.",
			secret:      "The thieves' guild and the Lantern Watch are the same people. The ledger hidden in the city says who, and what they took from {poi1}.",
			hookTitle:   "Trouble at the Market",
			hook:        "Someone is poisoning the wells of {region}. The first victims all drank at {poi1}; the Watch suspects a merchant who keeps a stall near {poi2}.",
		},
	},
	{
		id: "starter-desert", name: "Starter desert",
		desc:    "Open dunes and red badland mesas, with a few palm-ringed oases; tombs, caravans and obelisks.",
		terrain: desertTerrain,
		pois: []poiKind{
			{cat: "oasis", tags: []string{"water", "rest"}, n: [3]int{2, 3, 5}, place: true, anchorOnly: true,
				names: []string{"Oasis of Sweet Water", "Palm Spring", "Mirage Well", "Oasis of the Two Sisters", "The Green Eye"}},
			{cat: "tomb", tags: []string{"ancient", "undead"}, on: "rd", n: [3]int{1, 2, 3}, place: true, pick: true, open: true, minI: 1, maxI: 3,
				names: []string{"Tomb of the Sand King", "Sunken Necropolis", "Tomb of Queen Asha", "Mausoleum of Dust"},
				items: []string{"Gold Scarab", "Canopic Jar", "Funerary Mask", "Sun Disc Amulet"}},
			{cat: "caravan", tags: []string{"trade", "travellers"}, on: "d", n: [3]int{1, 2, 3}, place: true, pick: true, minI: 1, maxI: 2,
				names: []string{"Salt Caravan", "Spice Caravan", "Nomad Encampment", "Caravan of the Blue Veils"},
				items: []string{"Waterskin", "Bolt of Silk", "Sack of Spices", "Camel Saddle"}},
			{cat: "obelisk", tags: []string{"ancient", "landmark"}, on: "rh", n: [3]int{1, 1, 2},
				names: []string{"Sun Obelisk", "Broken Colossus", "Sand-Scoured Obelisk", "Watchtower of Bone"}},
			{cat: "cache", tags: []string{"hidden", "loot"}, on: "d", n: [3]int{1, 1, 2}, gm: true, pick: true, open: true, minI: 1, maxI: 2,
				names: []string{"Buried Chest", "Smugglers' Cache"},
				items: []string{"Bag of Silver", "Scimitar", "Ancient Map"}},
			{cat: "nest", tags: []string{"danger", "beast"}, on: "dr", n: [3]int{1, 1, 2}, gm: true,
				names: []string{"Giant Scorpion Nest", "Sandworm Burrow", "Ghoul Pits"}},
		},
		flavor: flavor{
			regions:     []string{"The Sea of Dust", "Asharan Waste", "The Red Expanse", "Sunreach"},
			areas:       []string{"Singing Dunes", "Red Mesas", "Salt Pans", "Bone Flats", "Glass Sands", "Scorpion Reach", "Wind Gap", "Caravan Road"},
			intro:       "{region} is dunes from horizon to horizon, broken by red badland mesas. Water means life: every caravan route runs from oasis to oasis, and every oasis has an owner.",
			faction:     "The Blue Veils",
			factionText: "Nomad clans who guide caravans across {region} and collect a toll at every well. Honour the guest-right and they will die for you; break it and the desert will not hide you.",
			secret:      "The Sand King's tomb at {poi2} is not sealed from the inside. His priests still walk the dunes at night, looking for the scarab that opens it.",
			hookTitle:   "The Dry Well",
			hook:        "The oasis at {poi1} has run dry overnight, and the Blue Veils blame the tomb-robbers camped near {poi2}.",
		},
	},
	{
		id: "starter-wetland", name: "Starter wetland",
		desc:    "Swamp and reed beds threaded by shallow channels and dark pools, with grassy hummocks and woods; stilt villages, sunken ruins.",
		terrain: wetlandTerrain,
		pois: []poiKind{
			{cat: "village", tags: []string{"settlement", "rest"}, on: "g", n: [3]int{1, 1, 2}, place: true,
				names: []string{"Reedwater", "Stilt Hamlet", "Frogmouth Landing", "Eelcatchers' Stilts"}},
			{cat: "hut", tags: []string{"npc", "magic"}, on: "gf", n: [3]int{1, 1, 2}, place: true, pick: true, minI: 0, maxI: 1,
				names: []string{"Witch's Hut", "Hermit's Stilt-House", "Old Mother Bogwort's Hut"},
				items: []string{"Bottled Marsh Light", "Hag's Charm"}},
			{cat: "ruin", tags: []string{"ancient", "explorable"}, on: "xs", n: [3]int{1, 2, 3}, place: true, pick: true, minI: 0, maxI: 1,
				names: []string{"Sunken Chapel", "Drowned Watchtower", "Moss Keep", "Half-Sunk Manor"},
				items: []string{"Waterlogged Tome", "Tarnished Crown"}},
			{cat: "herbs", tags: []string{"gather", "herbs"}, on: "xg", n: [3]int{1, 2, 3}, pick: true, minI: 1, maxI: 3,
				names: []string{"Bog Myrtle Patch", "Moonlily Bed", "Sundew Meadow", "Marshmallow Stand"},
				items: []string{"Bog Myrtle", "Moonlily", "Sundew Leaf", "Marshmallow Root"}},
			{cat: "grave", tags: []string{"undead", "hidden"}, on: "x", n: [3]int{1, 1, 2}, gm: true, pick: true, open: true, minI: 1, maxI: 2,
				names: []string{"Bog Body", "Drowned Knight's Grave", "Barrow Mound"},
				items: []string{"Rusted Longsword", "Bronze Torc", "Silver Locket"}},
			{cat: "lair", tags: []string{"danger"}, on: "xs", n: [3]int{1, 2, 2}, gm: true, place: true,
				names: []string{"Will-o'-Wisp Hollow", "Hydra Pool", "Lizardfolk Warcamp", "Leech Pit"}},
		},
		flavor: flavor{
			regions:     []string{"The Sodden Fens", "Mirewater", "The Greymarsh", "Reedmere"},
			areas:       []string{"Black Pools", "Reed Sea", "Heron Flats", "Drowned Fields", "Mistmere", "Eel Channels", "Willow Carr", "Peat Banks"},
			intro:       "{region} is neither land nor water: swamp and reed beds, cut by shallow channels that shift with every flood. Locals travel by punt and know which hummocks will hold a man.",
			faction:     "The Reed Folk",
			factionText: "Fisher families of {region} who live on stilts and trade eels and moonlilies for iron. They are wary of strangers, and warier still of lights over the water at night.",
			secret:      "The lights over the fen are the dead of a drowned army. Their knight's grave holds the locket that could lay them to rest, and the lizardfolk at {poi2} guard it.",
			hookTitle:   "Lights on the Water",
			hook:        "Children are going missing from {poi1}. The Reed Folk say the marsh lights took them, and that the trail leads toward {poi2}.",
		},
	},
	{
		id: "starter-archipelago", name: "Starter archipelago",
		desc:    "Deep sea with a scatter of islands: shallows and beaches, grassland and forest, hills and peaks; ports, wrecks and coves.",
		terrain: archipelagoTerrain,
		pois: []poiKind{
			{cat: "port", tags: []string{"settlement", "harbour"}, on: "b", n: [3]int{1, 2, 3}, place: true,
				names: []string{"Port Saltmarrow", "Gullhaven", "Anchor's Rest", "Coralport", "Tidewick"}},
			{cat: "lighthouse", tags: []string{"landmark"}, on: "hb", n: [3]int{1, 1, 2},
				names: []string{"Old Lighthouse", "Beacon of Saint Mer", "Storm Tower"}},
			{cat: "shrine", tags: []string{"holy"}, on: "fhm", n: [3]int{1, 1, 2}, place: true, pick: true, minI: 0, maxI: 1,
				names: []string{"Shrine of the Sea Mother", "Whale-Bone Shrine", "Tide Altar"},
				items: []string{"Conch of Calling"}},
			{cat: "wreck", tags: []string{"loot", "ship"}, on: "s", n: [3]int{1, 2, 3}, pick: true, open: true, minI: 1, maxI: 2,
				names: []string{"Wreck of the Gannet", "Wreck of the Queen's Folly", "Barnacled Hulk", "Sunken Galleon"},
				items: []string{"Ship's Bell", "Captain's Log", "Brass Spyglass", "Barnacled Cutlass"}},
			{cat: "cove", tags: []string{"pirates", "hidden"}, on: "b", n: [3]int{1, 1, 2}, gm: true, place: true,
				names: []string{"Pirate Cove", "Smugglers' Grotto", "Black Flag Cove"}},
			{cat: "treasure", tags: []string{"loot", "hidden"}, on: "bg", n: [3]int{1, 1, 2}, gm: true, pick: true, open: true, minI: 1, maxI: 2,
				names: []string{"Buried Treasure", "X Marks the Spot"},
				items: []string{"Chest of Doubloons", "Pearl Necklace", "Cursed Gold Coin"}},
		},
		flavor: flavor{
			regions:     []string{"The Scattered Isles", "Saltmarrow Archipelago", "The Gull Islands", "The Thousand Reefs"},
			areas:       []string{"Windward Isles", "Leeward Isles", "Coral Sound", "Stormreach", "Pearl Banks", "Sunset Keys", "Kraken Deep", "Gull Rocks"},
			intro:       "{region} are a scatter of islands in a deep, cold sea: sandy beaches, wooded hills and a few bare peaks. Everything travels by boat, and every captain has a story about the reefs.",
			faction:     "The Saltmarrow Company",
			factionText: "A merchant company that holds the trading charters of {region}. Its ships carry pearls and timber; its letters of marque turn pirates into privateers when it suits.",
			secret:      "The wrecks are not accidents. A Company captain lures ships onto the reefs and takes the cargo to {poi2}.",
			hookTitle:   "The Missing Fleet",
			hook:        "Three ships left {poi1} a month ago and none reached port. The Saltmarrow Company offers a reward for news of them, and a larger one for their cargo.",
		},
	},
	{
		id: "starter-volcanic", name: "Starter volcanic",
		desc:    "Ash plains and black rock around smoking volcanoes, with lava flows down the mountains and hot springs in the lowlands.",
		terrain: volcanicTerrain,
		pois: []poiKind{
			{cat: "caldera", tags: []string{"landmark", "hazard"}, n: [3]int{1, 2, 3}, place: true, anchorOnly: true,
				names: []string{"Great Caldera", "Smoking Crater", "Maw of the Mountain"}},
			{cat: "forge", tags: []string{"craft", "npc"}, on: "a", n: [3]int{1, 1, 2}, place: true, pick: true, minI: 0, maxI: 1,
				names: []string{"Forge of the Ember Dwarves", "Salamander Smithy", "Cinder Forge"},
				items: []string{"Obsidian Blade", "Fireproof Gloves"}},
			{cat: "obsidian", tags: []string{"gather"}, on: "ka", n: [3]int{1, 2, 3}, pick: true, minI: 1, maxI: 3,
				names: []string{"Obsidian Field", "Glass Flats", "Black Shard Ridge"},
				items: []string{"Obsidian Shard", "Volcanic Glass", "Sulphur Crystal"}},
			{cat: "vent", tags: []string{"hazard", "landmark"}, on: "ah", n: [3]int{1, 2, 3},
				names: []string{"Steam Vent", "Sulphur Spring", "Lava Tube Entrance", "Boiling Mud Pot"}},
			{cat: "shrine", tags: []string{"holy"}, on: "h", n: [3]int{1, 1, 1}, place: true,
				names: []string{"Shrine of the Mountain Flame", "Ash Pilgrims' Cairn"}},
			{cat: "cult", tags: []string{"cult", "danger"}, on: "ah", n: [3]int{1, 1, 2}, gm: true, place: true, pick: true, minI: 0, maxI: 1,
				names: []string{"Camp of the Burning Eye", "Ashen Brotherhood Camp", "Ember Cultists' Circle"},
				items: []string{"Cult Robes", "Fire Opal"}},
			{cat: "lair", tags: []string{"danger", "boss"}, on: "mh", n: [3]int{1, 1, 1}, gm: true, place: true, pick: true, open: true, minI: 1, maxI: 2,
				names: []string{"Red Dragon's Lair", "Fire Giant Hall", "Magma Drake Roost"},
				items: []string{"Dragon-Hoard Gold", "Ruby the Size of a Fist", "Flame Tongue Sword"}},
		},
		flavor: flavor{
			regions:     []string{"The Cinderlands", "Ashfall", "The Burning Reach", "Emberhold"},
			areas:       []string{"Ash Plains", "Black Glass Fields", "Smoking Slopes", "Sulphur Flats", "Ember Ridge", "Cinder Vale", "Obsidian Coast", "Molten Gate"},
			intro:       "{region} are grey ash plains and black rock under a red sky. The volcanoes have not stopped smoking in living memory, and lava still runs down their flanks at night.",
			faction:     "The Ember Dwarves",
			factionText: "A clan of smiths who forge with volcanic heat in {region}. They trade obsidian blades for food and water, and distrust anyone who worships the mountain.",
			secret:      "The cultists at {poi2} are trying to wake what sleeps under the caldera. They are closer than the dwarves think.",
			hookTitle:   "The Mountain Stirs",
			hook:        "The ground has shaken every night for a week and ash falls like snow. The Ember Dwarves want someone to climb to {poi1} and find out why.",
		},
	},
	{
		id: "starter-caverns", name: "Starter caverns",
		desc:    "Solid rock riddled with winding cave tunnels and chambers, with underground lakes; fungus groves, crystal veins, warrens and vaults.",
		terrain: cavernsTerrain,
		pois: []poiKind{
			{cat: "lake", tags: []string{"water"}, n: [3]int{1, 1, 2}, place: true, anchorOnly: true,
				names: []string{"Still Lake", "Black Mirror Pool", "Dripping Grotto"}},
			{cat: "grove", tags: []string{"gather", "light"}, on: "c", n: [3]int{1, 1, 2}, place: true, pick: true, minI: 1, maxI: 3,
				names: []string{"Glowcap Grove", "Luminous Garden", "Spore Garden"},
				items: []string{"Glowcap Mushroom", "Puffball Spores", "Cave Truffle"}},
			{cat: "crystal", tags: []string{"gather", "mineral"}, on: "c", n: [3]int{1, 2, 3}, pick: true, minI: 1, maxI: 2,
				names: []string{"Crystal Vein", "Geode Chamber", "Singing Crystals"},
				items: []string{"Quartz Crystal", "Raw Amethyst", "Silver Ore"}},
			{cat: "vault", tags: []string{"ancient", "door"}, on: "c", n: [3]int{1, 1, 1}, place: true, pick: true, open: true, minI: 1, maxI: 2,
				names: []string{"Dwarven Vault", "Sealed Ancestral Vault", "Forgotten Strongroom"},
				items: []string{"Dwarven Warhammer", "Mithral Ingot", "Runed Key"}},
			{cat: "warren", tags: []string{"danger", "monsters"}, on: "c", n: [3]int{1, 1, 2}, gm: true, place: true,
				names: []string{"Goblin Warren", "Kobold Tunnels", "Troglodyte Den"}},
			{cat: "remains", tags: []string{"loot", "grim"}, on: "c", n: [3]int{1, 2, 3}, gm: true, pick: true, open: true, minI: 1, maxI: 3,
				names: []string{"Lost Adventurer's Remains", "Miner's Skeleton", "Crushed Ore Cart"},
				items: []string{"Torn Backpack", "Hooded Lantern", "Pickaxe", "Silver Coins", "Journal Page"}},
		},
		flavor: flavor{
			regions:     []string{"The Underdark Gate", "Deepholm", "The Echoing Dark", "Glimmerdeep"},
			areas:       []string{"Upper Tunnels", "Fungus Reach", "Drowned Galleries", "Crystal Halls", "The Narrows", "Old Mine", "Bat Roost", "Deep Chambers"},
			intro:       "{region} is a maze of natural tunnels through solid rock, opening now and then into chambers big enough to hold a town. Water drips everywhere and pools into black, still lakes.",
			faction:     "The Lamplighters",
			factionText: "Deep-gnome guides who keep lamps burning along the safe routes through {region}. They charge by the hour and never go past the last lamp.",
			secret:      "The vault was sealed to keep something in. The goblins at {poi2} have been digging toward it for a year.",
			hookTitle:   "The Last Lamp",
			hook:        "A Lamplighter has gone missing beyond {poi1}. Her lamp was found burning at {poi2}, far past the last safe route.",
		},
	},
	{
		id: "empty-hex", name: "Empty hex map",
		desc:    "A grass hex grid at elevation 0 and nothing else: a blank canvas to paint.",
		terrain: func(c *gen) { c.g.Fill(Grass, 0) },
	},
}

// ---- terrain steps ----

func jungleTerrain(c *gen) {
	scale := max(c.w, c.h) / 3
	H := c.field(newNoise(c.r), scale, 4)
	M := c.field(newNoise(c.r), scale/2, 3)
	hr, mr := ranks(H), ranks(M)
	for y := range c.h {
		for x := range c.w {
			i := y*c.w + x
			h, m := hr[i], mr[i]
			var t Terrain
			switch {
			case h >= 975:
				t = Mountain
			case h >= 870:
				t = Hills
			case h < 25:
				t = DeepWater
			case h < 50:
				t = Shallows
			case m >= 330:
				t = Jungle
			case m >= 120:
				t = Forest
			default:
				t = Grass
			}
			c.set(x, y, t, h/100)
		}
	}
	for range 2 + c.w/48 {
		x, y, ok := c.randomCell("hm", 3, 1000)
		if !ok {
			continue
		}
		// Flow downhill, drawn toward a random point on the map's edge so
		// that the river runs rather than filling its basin.
		tx, ty := 0, c.r.intn(c.h)
		switch c.r.intn(4) {
		case 1:
			tx = c.w - 1
		case 2:
			tx, ty = c.r.intn(c.w), 0
		case 3:
			tx, ty = c.r.intn(c.w), c.h-1
		}
		flow := make([]int64, len(H))
		for i := range flow {
			flow[i] = H[i] + 2500*int64(Distance(i%c.w, i/c.w, tx, ty))
		}
		step := 0
		c.walk(x, y, flow, 6000, 4*(c.w+c.h),
			func(x, y int) bool { t := c.t(x, y); return t == DeepWater || t == Shallows },
			func(x, y int) {
				if c.t(x, y) != DeepWater {
					c.set(x, y, Shallows, c.e(x, y)-1)
				}
				if step++; step%8 == 3 {
					c.anchor("crossing", x, y, "")
				}
			})
	}
}

type rect struct{ x, y, w, h int }

func (r rect) has(x, y int) bool { return x >= r.x && y >= r.y && x < r.x+r.w && y < r.y+r.h }

func (r rect) center() (int, int) { return r.x + r.w/2, r.y + r.h/2 }

func dungeonTerrain(c *gen) {
	c.g.Fill(DungeonWall, 3)
	var rooms []rect
	area, maxArea := 0, c.w*c.h*28/100
	for range c.w * c.h / 12 {
		rw, rh := c.r.between(4, 9), c.r.between(3, 6)
		r := rect{c.r.between(1, c.w-rw-1), c.r.between(1, c.h-rh-1), rw, rh}
		if slices.ContainsFunc(rooms, func(o rect) bool {
			return r.x < o.x+o.w+1 && o.x < r.x+r.w+1 && r.y < o.y+o.h+1 && o.y < r.y+r.h+1
		}) {
			continue
		}
		rooms = append(rooms, r)
		if area += rw * rh; area >= maxArea {
			break
		}
	}
	slices.SortFunc(rooms, func(a, b rect) int {
		ax, ay := a.center()
		bx, by := b.center()
		if ax != bx {
			return ax - bx
		}
		return ay - by
	})
	for _, r := range rooms {
		for y := r.y; y < r.y+r.h; y++ {
			for x := r.x; x < r.x+r.w; x++ {
				c.set(x, y, DungeonFloor, 1)
			}
		}
	}
	inRoom := func(x, y int) bool {
		return slices.ContainsFunc(rooms, func(r rect) bool { return r.has(x, y) })
	}
	// corridor carves an L-shaped corridor between two rooms' centres and
	// marks doors where it leaves a and enters b through a wall.
	corridor := func(a, b rect) {
		ax, ay := a.center()
		bx, by := b.center()
		var path [][2]int
		hfirst := c.r.chance(1, 2)
		x, y := ax, ay
		for x != bx || y != by {
			if (hfirst && x != bx) || y == by {
				x += sign(bx - x)
			} else {
				y += sign(by - y)
			}
			path = append(path, [2]int{x, y})
		}
		var lastOutside [2]int
		lastWasWall := false
		for i, p := range path {
			x, y := p[0], p[1]
			wall := c.t(x, y) == DungeonWall
			if wall && (i == 0 || a.has(path[i-1][0], path[i-1][1])) && !a.has(x, y) {
				c.anchor("door", x, y, "")
			}
			if b.has(x, y) && i > 0 && !b.has(path[i-1][0], path[i-1][1]) && lastWasWall {
				c.anchor("door", lastOutside[0], lastOutside[1], "")
			}
			if !inRoom(x, y) && i%5 == 2 {
				c.anchor("trap", x, y, "")
			}
			lastOutside, lastWasWall = p, wall
			if wall {
				c.set(x, y, DungeonFloor, 0)
			}
		}
	}
	for i := 1; i < len(rooms); i++ {
		corridor(rooms[i-1], rooms[i])
	}
	for range len(rooms) / 4 {
		if len(rooms) > 2 {
			i := c.r.intn(len(rooms) - 2)
			corridor(rooms[i], rooms[i+2])
		}
	}
	if len(rooms) == 0 {
		return
	}
	ex, ey := rooms[0].center()
	c.anchor("stairs", ex, ey, "")
	far, fd := 0, -1
	for i, r := range rooms {
		x, y := r.center()
		if d := Distance(ex, ey, x, y); d > fd {
			far, fd = i, d
		}
	}
	if far != 0 {
		r := rooms[far]
		for y := r.y; y < r.y+r.h; y++ {
			for x := r.x; x < r.x+r.w; x++ {
				c.set(x, y, DungeonFloor, 2)
			}
		}
		x, y := r.center()
		c.anchor("altar", x, y, "")
	}
	var pools []int
	for i, r := range rooms {
		if i != 0 && i != far && r.w >= 5 && r.h >= 4 {
			pools = append(pools, i)
		}
	}
	if len(pools) > 0 {
		r := rooms[pick(c.r, pools)]
		for y := r.y + 1; y < r.y+r.h-1; y++ {
			for x := r.x + 1; x < r.x+r.w-1; x++ {
				c.set(x, y, Shallows, 0)
			}
		}
		c.anchor("pool", r.x, r.y+r.h/2, "")
	}
}

func sign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

func cityTerrain(c *gen) {
	scale := max(c.w, c.h) / 4
	fr := ranks(c.field(newNoise(c.r), scale, 3))
	er := ranks(c.field(newNoise(c.r), scale, 2))
	for y := range c.h {
		for x := range c.w {
			i := y*c.w + x
			t := Grass
			switch {
			case fr[i] < 180:
				t = Forest
			case fr[i] >= 600:
				t = Farmland
			}
			c.set(x, y, t, er[i]/250)
		}
	}
	// The river: a meander across the map, a few rows below the middle.
	river := make([]bool, c.w*c.h)
	rn := newNoise(c.r)
	width := 1 + c.w/64
	y0, amp := c.h*2/3, int64(c.h/8)
	prev := -1
	for x := range c.w {
		ry := y0 + int((rn.sample(int64(x)<<16*6/int64(c.w), 0)-32768)*amp/32768)
		lo, hi := ry, ry+width-1
		if prev >= 0 {
			lo, hi = min(lo, prev), max(hi, prev)
		}
		for y := max(lo, 0); y <= min(hi, c.h-1); y++ {
			river[y*c.w+x] = true
			c.set(x, y, DeepWater, 0)
		}
		prev = ry
	}
	// The city: an ellipse filling most of the map.
	cx, cy := (c.w-1)/2, (c.h-1)/2
	cpx, cpy := cellPos(cx, cy)
	a, b := int64(c.w)*1000*46/100, int64(c.h)*866*46/100
	inside := make([]bool, c.w*c.h)
	for y := range c.h {
		for x := range c.w {
			px, py := cellPos(x, y)
			dx, dy := (px-cpx)*1000/a, (py-cpy)*1000/b
			inside[y*c.w+x] = dx*dx+dy*dy <= 1000*1000
		}
	}
	isIn := func(x, y int) bool { return c.in(x, y) && inside[y*c.w+x] }
	const bx, by = 7, 6
	street := func(x, y int) bool {
		return (x-cx)%bx == 0 || (y-cy)%by == 0
	}
	for y := range c.h {
		for x := range c.w {
			i := y*c.w + x
			if !inside[i] {
				continue
			}
			edge := false
			for _, nb := range Neighbors(x, y) {
				if !isIn(nb[0], nb[1]) {
					edge = true
				}
			}
			switch {
			case river[i] && street(x, y) && !edge:
				c.set(x, y, Street, 1) // a bridge
			case river[i]:
				// the river runs on, under the wall
			case edge:
				c.set(x, y, Wall, 3)
			case street(x, y):
				c.set(x, y, Street, 0)
			case c.r.chance(85, 100):
				c.set(x, y, Building, 1)
			case c.r.chance(1, 2):
				c.set(x, y, Grass, 0)
			default:
				c.set(x, y, Street, 0)
			}
		}
	}
	// The market square.
	c.disc(cx, cy, 2, func(x, y, _ int) {
		if t := c.t(x, y); t != Wall && !river[y*c.w+x] {
			c.set(x, y, Street, 0)
		}
	})
	c.anchor("market", cx, cy, "")
	// The park, with a pond and a fountain.
	r := max(2, c.w/20)
	for range 200 {
		x, y := c.r.intn(c.w), c.r.intn(c.h)
		if d := Distance(cx, cy, x, y); d < c.w/6 || d > c.w/4 || !isIn(x, y) {
			continue
		}
		ok := true
		c.disc(x, y, r+1, func(xx, yy, _ int) {
			if !inside[yy*c.w+xx] || river[yy*c.w+xx] || c.t(xx, yy) == Wall {
				ok = false
			}
		})
		if !ok {
			continue
		}
		c.disc(x, y, r, func(xx, yy, d int) {
			switch {
			case d == 0:
				c.set(xx, yy, Shallows, 0)
			case c.r.chance(3, 10):
				c.set(xx, yy, Forest, 0)
			default:
				c.set(xx, yy, Grass, 0)
			}
		})
		c.anchor("fountain", x, y, "")
		break
	}
	// Four gates where the main streets meet the wall, with roads out.
	gate := func(name string, x, y, dx, dy int) {
		for ; c.in(x, y); x, y = x+dx, y+dy {
			if c.t(x, y) == Wall {
				c.set(x, y, Street, 0)
				c.anchor("gate", x, y, name)
				for x, y = x-dx, y-dy; c.in(x, y); x, y = x-dx, y-dy {
					c.set(x, y, Street, c.e(x, y))
				}
				return
			}
		}
	}
	gate("West Gate", 0, cy, 1, 0)
	gate("East Gate", c.w-1, cy, -1, 0)
	gate("North Gate", cx, 0, 0, 1)
	gate("South Gate", cx, c.h-1, 0, -1)
}

func desertTerrain(c *gen) {
	br := ranks(c.field(newNoise(c.r), max(c.w, c.h)/4, 4))
	dr := ranks(c.field(newNoise(c.r), max(c.w, c.h)/12, 2))
	for y := range c.h {
		for x := range c.w {
			i := y*c.w + x
			switch b := br[i]; {
			case b >= 990:
				c.set(x, y, Mountain, 8)
			case b >= 945:
				c.set(x, y, Hills, 6)
			case b >= 760:
				c.set(x, y, Badlands, 3+(b-760)/70)
			default:
				c.set(x, y, Desert, dr[i]/170)
			}
		}
	}
	var oases [][2]int
	for range 2 + c.w/40 {
		for range 200 {
			x, y := c.r.between(3, c.w-4), c.r.between(3, c.h-4)
			if c.t(x, y) != Desert || slices.ContainsFunc(oases, func(o [2]int) bool {
				return Distance(o[0], o[1], x, y) < 9
			}) {
				continue
			}
			oases = append(oases, [2]int{x, y})
			c.disc(x, y, 3, func(xx, yy, d int) {
				switch {
				case d == 0:
					c.set(xx, yy, DeepWater, 0)
				case d == 1:
					c.set(xx, yy, Shallows, 0)
				case d == 2 && c.r.chance(4, 10):
					c.set(xx, yy, Forest, 1) // palms
				case d == 2 || c.r.chance(1, 2):
					c.set(xx, yy, Grass, 1)
				}
			})
			c.anchor("oasis", x+2, y, "")
			break
		}
	}
}

func wetlandTerrain(c *gen) {
	scale := max(c.w, c.h) / 4
	W := c.field(newNoise(c.r), scale, 4)
	wr := ranks(W)
	vr := ranks(c.field(newNoise(c.r), scale*2/3, 3))
	for y := range c.h {
		for x := range c.w {
			i := y*c.w + x
			switch w := wr[i]; {
			case w < 60:
				c.set(x, y, DeepWater, 0)
			case w < 260:
				c.set(x, y, Shallows, 0)
			case w < 780:
				c.set(x, y, Swamp, 1)
			case vr[i] >= 600:
				c.set(x, y, Forest, 2)
			default:
				c.set(x, y, Grass, 2+(w-780)/110)
			}
		}
	}
	// Channels meander from the north edge to the south.
	down := make([]int64, c.w*c.h)
	for i := range down {
		down[i] = int64(c.h-i/c.w)*20000 + W[i]/4
	}
	for range 1 + c.w/32 {
		c.walk(c.r.between(2, c.w-3), 1, down, 30000, 4*c.h,
			func(int, int) bool { return false },
			func(x, y int) {
				if c.t(x, y) != DeepWater {
					c.set(x, y, Shallows, 0)
				}
			})
	}
}

// bumps returns, for every cell, the highest of the domes of the given
// centres and radii (in cells), 0–65535.
func (c *gen) bumps(centres [][3]int) []int64 {
	out := make([]int64, c.w*c.h)
	for _, k := range centres {
		kx, ky := cellPos(k[0], k[1])
		r2 := int64(k[2]) * 1000 * int64(k[2]) * 1000
		for y := range c.h {
			for x := range c.w {
				px, py := cellPos(x, y)
				d2 := (px-kx)*(px-kx) + (py-ky)*(py-ky)
				if d2 < r2 {
					out[y*c.w+x] = max(out[y*c.w+x], (r2-d2)*65535/r2)
				}
			}
		}
	}
	return out
}

func archipelagoTerrain(c *gen) {
	small := min(c.w, c.h)
	var isles [][3]int
	for range 3 + c.w/16 {
		isles = append(isles, [3]int{
			c.r.between(c.w/8, c.w-1-c.w/8), c.r.between(c.h/8, c.h-1-c.h/8),
			c.r.between(max(2, small/10), max(3, small/5)),
		})
	}
	B := c.bumps(isles)
	N := c.field(newNoise(c.r), max(c.w, c.h)/5, 4)
	H := make([]int64, len(B))
	for i := range H {
		H[i] = (B[i]*13 + N[i]*7) / 20
	}
	hr := ranks(H)
	for y := range c.h {
		for x := range c.w {
			switch h := hr[y*c.w+x]; {
			case h >= 740:
				l := (h - 740) * 1000 / 260
				e := 1 + l*9/1000
				switch {
				case l < 150:
					c.set(x, y, Beach, e)
				case l < 550:
					c.set(x, y, Grass, e)
				case l < 800:
					c.set(x, y, Forest, e)
				case l < 940:
					c.set(x, y, Hills, e)
				default:
					c.set(x, y, Mountain, e)
				}
			case h >= 640:
				c.set(x, y, Shallows, 0)
			default:
				c.set(x, y, DeepWater, 0)
			}
		}
	}
}

func volcanicTerrain(c *gen) {
	small := min(c.w, c.h)
	var cones [][3]int
	for range 1 + c.w/64 {
		cones = append(cones, [3]int{
			c.r.between(c.w/5, c.w*4/5), c.r.between(c.h/5, c.h*4/5),
			c.r.between(small/4, small/3),
		})
	}
	B := c.bumps(cones)
	N := c.field(newNoise(c.r), max(c.w, c.h)/4, 4)
	H := make([]int64, len(B))
	for i := range H {
		H[i] = (B[i]*12 + N[i]*8) / 20
	}
	hr := ranks(H)
	qr := ranks(c.field(newNoise(c.r), max(c.w, c.h)/6, 3))
	for y := range c.h {
		for x := range c.w {
			i := y*c.w + x
			switch h := hr[i]; {
			case h >= 900:
				c.set(x, y, Mountain, 7+(h-900)/40)
			case h >= 700:
				c.set(x, y, Hills, 4+(h-700)/70)
			case h < 30:
				c.set(x, y, Shallows, 0) // hot springs
			case qr[i] >= 640:
				c.set(x, y, Rock, 1+(h-30)/300)
			default:
				c.set(x, y, Ash, (h-30)/230)
			}
		}
	}
	crater := 1 + c.w/64
	for _, k := range cones {
		for range 2 + c.r.intn(2) {
			c.walk(k[0], k[1], H, 3000, c.w/4+c.r.intn(c.w/4+1),
				func(int, int) bool { return false },
				func(x, y int) { c.set(x, y, Lava, c.e(x, y)) })
		}
		c.disc(k[0], k[1], crater, func(x, y, _ int) { c.set(x, y, Lava, 9) })
		if rx := k[0] + crater + 1; c.in(rx, k[1]) {
			c.set(rx, k[1], Mountain, 9) // the rim
			c.anchor("caldera", rx, k[1], "")
		}
	}
}

func cavernsTerrain(c *gen) {
	n := c.w * c.h
	rock := make([]bool, n)
	for y := range c.h {
		for x := range c.w {
			rock[y*c.w+x] = x == 0 || y == 0 || x == c.w-1 || y == c.h-1 || c.r.chance(52, 100)
		}
	}
	next := make([]bool, n)
	for range 4 {
		for y := range c.h {
			for x := range c.w {
				k := 0
				if rock[y*c.w+x] {
					k++
				}
				for _, nb := range Neighbors(x, y) {
					if !c.in(nb[0], nb[1]) || rock[nb[1]*c.w+nb[0]] {
						k++
					}
				}
				next[y*c.w+x] = k >= 4
			}
		}
		rock, next = next, rock
	}
	// Label the open areas; drop tiny ones, tunnel the rest to the largest.
	label := make([]int32, n)
	var sizes []int
	var firsts []int
	queue := make([]int, 0, n)
	for s := range n {
		if rock[s] || label[s] != 0 {
			continue
		}
		id := int32(len(sizes) + 1)
		label[s] = id
		queue = append(queue[:0], s)
		for q := 0; q < len(queue); q++ {
			x, y := queue[q]%c.w, queue[q]/c.w
			for _, nb := range Neighbors(x, y) {
				if j := nb[1]*c.w + nb[0]; c.in(nb[0], nb[1]) && !rock[j] && label[j] == 0 {
					label[j] = id
					queue = append(queue, j)
				}
			}
		}
		sizes = append(sizes, len(queue))
		firsts = append(firsts, s)
	}
	main := int32(0)
	for i, sz := range sizes {
		if main == 0 || sz > sizes[main-1] {
			main = int32(i + 1)
		}
	}
	for i, sz := range sizes {
		id := int32(i + 1)
		if id == main {
			continue
		}
		if sz < 8 {
			for j := range n {
				if label[j] == id {
					rock[j] = true
				}
			}
			continue
		}
		// Tunnel from this area's first cell to the nearest cell of the
		// largest area.
		fx, fy := firsts[i]%c.w, firsts[i]/c.w
		best, bd := -1, 1<<30
		for j := range n {
			if label[j] == main {
				if d := Distance(fx, fy, j%c.w, j/c.w); d < bd {
					best, bd = j, d
				}
			}
		}
		tx, ty := best%c.w, best/c.w
		for x, y := fx, fy; x != tx || y != ty; {
			if x != tx && (y == ty || c.r.chance(1, 2)) {
				x += sign(tx - x)
			} else {
				y += sign(ty - y)
			}
			rock[y*c.w+x] = false
		}
	}
	er := ranks(c.field(newNoise(c.r), max(c.w, c.h)/5, 3))
	wr := ranks(c.field(newNoise(c.r), max(c.w, c.h)/4, 3))
	for y := range c.h {
		for x := range c.w {
			i := y*c.w + x
			switch {
			case rock[i]:
				c.set(x, y, Rock, 5+er[i]/250)
			case wr[i] < 90:
				c.set(x, y, DeepWater, 0)
			case wr[i] < 200:
				c.set(x, y, Shallows, 0)
			default:
				c.set(x, y, CaveFloor, er[i]/334)
			}
		}
	}
	// Lake shores: cells by deep water, else by any water.
	var lakes [][2]int
	for _, water := range []string{"w", "ws"} {
		for y := range c.h {
			for x := range c.w {
				if t := c.t(x, y); (t != CaveFloor && t != Shallows) || slices.ContainsFunc(lakes, func(l [2]int) bool {
					return Distance(l[0], l[1], x, y) < 8
				}) {
					continue
				}
				for _, nb := range Neighbors(x, y) {
					if c.in(nb[0], nb[1]) && strings.IndexByte(water, byte(c.t(nb[0], nb[1]))) >= 0 &&
						!(c.t(x, y) == Shallows && c.t(nb[0], nb[1]) == Shallows) {
						lakes = append(lakes, [2]int{x, y})
						c.anchor("lake", x, y, "")
						break
					}
				}
			}
		}
		if len(lakes) > 0 {
			break
		}
	}
}
