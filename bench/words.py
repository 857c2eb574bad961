"""Word lists for synthetic business records, written for this project.

Names, business words, street names and towns are plain common English
words and name-like strings; none is taken from a real directory.
"""

GIVEN = """
Aaron Abby Adam Adrian Aisha Alan Albert Alex Alice Alma Amanda Amir Amy Ana Andre Andrea Angela Anita Anna
Anton Arthur Ava Barbara Ben Bernard Beth Bianca Bill Bruce Carla Carlos Carmen Carol Caroline Cecilia Chen
Chloe Chris Claire Clara Colin Craig Dana Daniel David Dean Diana Diego Dmitri Dora Doug Edith Edward Elena
Eli Eliza Ellen Emil Emily Emma Eric Erin Ethan Eva Fatima Felix Fiona Frank Gabriel Gina Grace Greg
Hana Hannah Harold Hector Helen Henry Hugo Ian Ingrid Irene Isaac Ivan Jack Jade James Jan Jane Jason Javier
Jean Jenny Jim Joan Joe John Jonas Jorge Jose Julia Julian June Karen Karl Kate Kevin Kim Lara Laura Leo Leon
Lena Lewis Liam Lily Linda Lisa Lucas Lucy Luis Luke Maria Marco Mark Marta Martin Mary Maya Megan Mei Mia Mike
Mila Nadia Nancy Nathan Nina Noah Nora Olga Oliver Omar Oscar Pablo Pam Paul Paula Pedro Peter Petra Phil Priya
Quinn Rachel Rafael Ravi Rita Robert Rosa Ruth Ryan Sam Sandra Sara Sean Simon Sofia Sonia Stan Stella Steve
Susan Tara Ted Teresa Theo Tina Tom Tony Uma Vera Victor Viktor Wanda Will Yara Yusuf Zoe
""".split()

SURNAMES = """
Abbott Acosta Adams Alvarez Andersen Armstrong Bailey Baker Banks Barnes Becker Bell Bennett Berg Bishop Black
Blair Bowman Boyd Bradley Brennan Brooks Brown Bryant Burke Burns Butler Byrne Campbell Carter Castillo Chang
Chavez Clarke Cohen Cole Collins Cooper Cruz Cunningham Dalton Daniels Davies Delgado Diaz Dixon Doyle Duncan
Dunn Edwards Ellis Engel Evans Farrell Fischer Fleming Flores Ford Foster Fox Franklin Fraser Garcia Gardner
Gibson Gill Gomez Gonzalez Gordon Graham Grant Gray Green Gupta Hall Hansen Hart Hayes Henderson Hill Hoffman
Holland Holt Howard Hughes Hunt Jensen Johnson Jones Jordan Kaur Keller Kelly Kennedy Khan Kim King Klein Knight
Koch Kowalski Lambert Lane Larsen Lawson Lee Lewis Lin Lopez Lucas Lynch Mahoney Marsh Martin Mason Meyer Miller
Mills Mitchell Moore Morales Moreno Morgan Murphy Murray Nash Nelson Nguyen Nielsen Novak Obrien Olsen Ortiz Owens
Palmer Park Patel Pearson Perez Perry Peters Phillips Porter Powell Price Quinn Ramirez Reed Reyes Rivera Roberts
Robinson Rojas Ross Russell Ryan Sanchez Santos Schmidt Scott Shah Shaw Silva Simmons Singh Smith Snyder Sousa
Stewart Stone Sullivan Sutton Tanaka Taylor Thomas Torres Tran Turner Vargas Vega Wagner Walker Wallace Walsh Ward
Warren Watson Weber Wells West White Williams Wilson Wolf Wong Wood Wright Young Zhang Zimmerman
""".split()

BUSINESS_WORDS = """
Acorn Amber Anchor Apex Arbor Aspen Atlas Aurora Bay Beacon Bear Birch Blue Bluebird Bright Brook Cardinal Cedar
Central Cherry Circle Citrus Clear Cloud Clover Coast Copper Coral Corner Cosmos Cottage Creek Crest Crown Crystal
Daisy Delta Desert Diamond Dove Eagle East Echo Elm Ember Emerald Evergreen Falcon Fern Fig Firefly Forest Fox
Garden Gateway Ginger Glacier Globe Golden Granite Green Grove Harbor Harvest Hawk Hazel Heritage Highland Hill
Holly Honey Horizon Iris Island Ivory Ivy Jade Juniper Keystone Lake Lantern Laurel Lavender Lemon Liberty Lighthouse
Lily Lime Linden Lotus Magnolia Maple Meadow Mesa Metro Mint Mission Monarch Moon Mountain North Oak Oasis Ocean
Olive Orchid Pacific Palm Park Peach Pearl Pebble Pepper Pine Pioneer Plum Poplar Prairie Prime Quartz Rainbow
Raven Red Redwood Ridge River Robin Rock Rose Ruby Sage Sapphire Silver Sky Sparrow Spring Spruce Star Stone Summit
Sun Sunrise Sunset Swan Thistle Tiger Timber Trail Tulip Twin Union Valley Velvet Vista Walnut West Willow Wind
""".split()

KINDS = [
    "Bakery", "Cafe", "Coffee House", "Diner", "Grill", "Pizzeria", "Bistro", "Deli", "Tavern", "Steakhouse",
    "Noodle Bar", "Taqueria", "Sushi Bar", "Ice Cream Shop", "Juice Bar", "Florist", "Bookstore", "Hardware",
    "Pharmacy", "Dental Clinic", "Animal Hospital", "Law Office", "Insurance Agency", "Barber Shop", "Hair Salon",
    "Nail Spa", "Day Spa", "Fitness Center", "Yoga Studio", "Dance School", "Music Store", "Toy Store", "Pet Supply",
    "Garden Center", "Auto Repair", "Tire Center", "Car Wash", "Dry Cleaners", "Laundromat", "Tailor", "Shoe Repair",
    "Print Shop", "Photo Studio", "Art Gallery", "Frame Shop", "Jewelers", "Optical", "Bicycle Shop", "Sporting Goods",
    "Furniture", "Appliance Repair", "Plumbing", "Electric", "Roofing", "Moving Company", "Storage", "Travel Agency",
    "Real Estate", "Accounting", "Tax Service", "Credit Union", "Pawn Shop", "Thrift Store", "Grocery", "Market",
    "Butcher", "Fish Market", "Wine Shop", "Brewery", "Tea Room", "Chocolatier", "Candy Shop", "Bagel Shop",
]

STREETS = """
Adams Alder Apple Arch Ash Aspen Bay Beach Beech Birch Bishop Bridge Broad Brook Cambridge Canal Canyon Carter
Cedar Center Chapel Chestnut Church Clay Cleveland Cliff College Columbia Cottage Court Cross Crystal Cypress Dale
Dogwood Eagle Elm Essex Euclid Fairview Ferry Forest Franklin Fulton Garden Glen Grand Grant Green Grove Hamilton
Harbor Harrison Hawthorne Hickory High Highland Hill Holly Hudson Jackson Jefferson Juniper Kent King Lafayette
Lake Laurel Lee Lexington Liberty Lincoln Locust Madison Magnolia Main Maple Market Meadow Mill Monroe Mulberry
Myrtle Nelson Oak Ocean Orange Orchard Park Pearl Pine Pleasant Poplar Prospect Quarry Railroad Ridge River Rose
School Shore Spring Spruce State Summit Sunset Sycamore Taylor Union Valley Vine Walnut Washington Water Willow
Wilson Winter Woodland
""".split()

# Spelled-out suffixes and their usual abbreviations.
SUFFIXES = [
    ("Street", "St"), ("Avenue", "Ave"), ("Boulevard", "Blvd"), ("Road", "Rd"), ("Drive", "Dr"), ("Lane", "Ln"),
    ("Court", "Ct"), ("Place", "Pl"), ("Terrace", "Ter"), ("Parkway", "Pkwy"), ("Highway", "Hwy"), ("Way", "Way"),
]
DIRECTIONS = [("North", "N"), ("South", "S"), ("East", "E"), ("West", "W")]

TOWNS = """
Ashford Bayview Bellmont Birchwood Bridgeport Brookside Carlisle Cedarville Centerville Clarksburg Clearwater
Cliffside Crestwood Dayton Eastbrook Edgewater Elmwood Fairfield Fairhaven Falls Church Franklin Georgetown
Glendale Glenwood Greenfield Greenville Hamilton Harborview Hartford Highland Park Hillcrest Hollywood Hudson
Jamestown Kingston Lakeside Lakewood Lancaster Lexington Lincoln Madison Maplewood Marion Meadowbrook Middleton
Milford Millbrook Milton Monroe Newport Northfield Oakdale Oakland Oakwood Parkside Pinecrest Plainview Pleasantville
Portland Princeton Quincy Redwood Richmond Ridgewood Riverside Rockport Rosedale Salem Sherwood Shelby Southport
Springfield Stonebridge Summerville Sunnyvale Troy Union City Valley View Vernon Westfield Westwood Weston Willowbrook
Winchester Woodbury Woodland York
""".split()

STATES = "AL AZ CA CO CT FL GA IA ID IL IN KS KY MA MD ME MI MN MO NC NE NH NJ NM NV NY OH OK OR PA SC TN TX UT VA WA WI".split()

EXTRA_WORDS = ["The", "Inc", "LLC", "Co", "Shop", "Express", "Original", "New"]

# Other words a listing may use for the same kind of business (word-level noise).
KIND_SYNONYMS = {
    "Bakery": ["Bake Shop", "Bakehouse"], "Cafe": ["Coffee Shop", "Coffee Bar"], "Coffee House": ["Cafe", "Coffee Shop"],
    "Diner": ["Restaurant", "Family Diner"], "Grill": ["Bar and Grill", "Grill House"], "Pizzeria": ["Pizza", "Pizza Shop"],
    "Bistro": ["Restaurant", "Brasserie"], "Deli": ["Delicatessen", "Sandwich Shop"], "Tavern": ["Pub", "Bar"],
    "Steakhouse": ["Steak House", "Chophouse"], "Noodle Bar": ["Noodle House", "Noodles"],
    "Taqueria": ["Tacos", "Mexican Grill"], "Sushi Bar": ["Sushi", "Japanese Restaurant"],
    "Ice Cream Shop": ["Ice Cream", "Creamery"], "Juice Bar": ["Juice Shop", "Smoothies"],
    "Florist": ["Flowers", "Flower Shop"], "Bookstore": ["Books", "Book Shop"], "Hardware": ["Hardware Store", "Tools"],
    "Pharmacy": ["Drugstore", "Chemist"], "Dental Clinic": ["Dentistry", "Family Dental"],
    "Animal Hospital": ["Veterinary Clinic", "Vet Clinic"], "Law Office": ["Law Firm", "Attorneys"],
    "Insurance Agency": ["Insurance", "Insurance Services"], "Barber Shop": ["Barbers", "Barbershop"],
    "Hair Salon": ["Salon", "Hair Studio"], "Nail Spa": ["Nail Salon", "Nails"], "Day Spa": ["Spa", "Wellness Spa"],
    "Fitness Center": ["Gym", "Fitness Club"], "Yoga Studio": ["Yoga", "Yoga Center"],
    "Dance School": ["Dance Studio", "Dance Academy"], "Music Store": ["Music Shop", "Instruments"],
    "Toy Store": ["Toys", "Toy Shop"], "Pet Supply": ["Pet Store", "Pet Shop"], "Garden Center": ["Nursery", "Garden Shop"],
    "Auto Repair": ["Auto Service", "Garage"], "Tire Center": ["Tires", "Tire Shop"], "Car Wash": ["Auto Wash", "Car Care"],
    "Dry Cleaners": ["Cleaners", "Dry Cleaning"], "Laundromat": ["Laundry", "Coin Laundry"],
    "Tailor": ["Alterations", "Tailoring"], "Shoe Repair": ["Cobbler", "Shoe Service"], "Print Shop": ["Printing", "Printers"],
    "Photo Studio": ["Photography", "Portrait Studio"], "Art Gallery": ["Gallery", "Fine Art"],
    "Frame Shop": ["Framing", "Custom Framing"], "Jewelers": ["Jewelry", "Jewellers"], "Optical": ["Optician", "Eyewear"],
    "Bicycle Shop": ["Bikes", "Cycle Shop"], "Sporting Goods": ["Sports", "Sport Shop"],
    "Furniture": ["Furniture Store", "Home Furnishings"], "Appliance Repair": ["Appliance Service", "Appliances"],
    "Plumbing": ["Plumbers", "Plumbing Services"], "Electric": ["Electrical", "Electricians"],
    "Roofing": ["Roofers", "Roofing Services"], "Moving Company": ["Movers", "Moving"], "Storage": ["Self Storage", "Storage Units"],
    "Travel Agency": ["Travel", "Travel Services"], "Real Estate": ["Realty", "Realtors"],
    "Accounting": ["Accountants", "Bookkeeping"], "Tax Service": ["Tax Preparation", "Taxes"],
    "Credit Union": ["Federal Credit Union", "Community Credit Union"], "Pawn Shop": ["Pawn", "Pawnbrokers"],
    "Thrift Store": ["Thrift Shop", "Secondhand"], "Grocery": ["Grocery Store", "Food Market"], "Market": ["Marketplace", "Foods"],
    "Butcher": ["Meats", "Butcher Shop"], "Fish Market": ["Seafood", "Fishmonger"], "Wine Shop": ["Wines", "Wine Cellar"],
    "Brewery": ["Brewing Company", "Brewpub"], "Tea Room": ["Tea House", "Tea Shop"], "Chocolatier": ["Chocolates", "Chocolate Shop"],
    "Candy Shop": ["Candy", "Sweets"], "Bagel Shop": ["Bagels", "Bagel Bakery"],
}

STATE_NAMES = {
    "AL": "Alabama", "AZ": "Arizona", "CA": "California", "CO": "Colorado", "CT": "Connecticut", "FL": "Florida",
    "GA": "Georgia", "IA": "Iowa", "ID": "Idaho", "IL": "Illinois", "IN": "Indiana", "KS": "Kansas", "KY": "Kentucky",
    "MA": "Massachusetts", "MD": "Maryland", "ME": "Maine", "MI": "Michigan", "MN": "Minnesota", "MO": "Missouri",
    "NC": "North Carolina", "NE": "Nebraska", "NH": "New Hampshire", "NJ": "New Jersey", "NM": "New Mexico",
    "NV": "Nevada", "NY": "New York", "OH": "Ohio", "OK": "Oklahoma", "OR": "Oregon", "PA": "Pennsylvania",
    "SC": "South Carolina", "TN": "Tennessee", "TX": "Texas", "UT": "Utah", "VA": "Virginia", "WA": "Washington",
    "WI": "Wisconsin",
}

# Words before a unit number in an address.
UNITS = ["Suite", "Unit", "Ste", "Floor"]

# A given name and the other form people also go by: a short form of a
# formal name, or the formal name of a short one, as in GIVEN.
NICKNAMES = [
    ("Abigail", "Abby"), ("Albert", "Al"), ("Alexander", "Alex"), ("Amanda", "Mandy"), ("Andrew", "Andre"),
    ("Angela", "Angie"), ("Anthony", "Tony"), ("Arthur", "Art"), ("Barbara", "Barb"), ("Benjamin", "Ben"),
    ("Bernard", "Bernie"), ("Elizabeth", "Beth"), ("William", "Bill"), ("Caroline", "Carrie"), ("Carol", "Carole"),
    ("Christopher", "Chris"), ("Daniel", "Dan"), ("David", "Dave"), ("Diana", "Di"), ("Douglas", "Doug"),
    ("Edward", "Ed"), ("Eliza", "Liza"), ("Emily", "Em"), ("Francis", "Frank"), ("Gregory", "Greg"),
    ("Harold", "Harry"), ("Henry", "Hank"), ("Isaac", "Ike"), ("John", "Jack"), ("James", "Jim"), ("Jennifer", "Jenny"),
    ("Joseph", "Joe"), ("Julia", "Julie"), ("Katherine", "Kate"), ("Kimberly", "Kim"), ("Lucas", "Luke"),
    ("Michael", "Mike"), ("Nathan", "Nate"), ("Oliver", "Ollie"), ("Pamela", "Pam"), ("Peter", "Pete"),
    ("Philip", "Phil"), ("Robert", "Bob"), ("Samuel", "Sam"), ("Sandra", "Sandy"), ("Sara", "Sally"), ("Stanley", "Stan"),
    ("Steven", "Steve"), ("Susan", "Sue"), ("Theodore", "Ted"), ("Teresa", "Tess"), ("Theodore", "Theo"),
    ("Christina", "Tina"), ("Thomas", "Tom"), ("Victor", "Vic"), ("William", "Will"), ("Zoe", "Zoey"),
]
