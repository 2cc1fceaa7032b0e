"""What a layout seed puts on the phone: contacts, threads, notes, alarms, settings order, labels and spacing.

Everything here is a pure function of the seed (``random.Random(seed)``), so a seed names one phone.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

from core.world.device import ACCENTS

FIRST_NAMES = (
    "Alice", "Bob", "Carol", "David", "Emma", "Farid", "Grace", "Hiro", "Ines", "Jamal", "Kate", "Liam", "Mei",
    "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tara", "Umar", "Vera", "Wei", "Ximena", "Yusuf", "Zoe",
    "Aaron", "Bianca", "Chen", "Diego", "Elena", "Felix", "Hana", "Ivan", "Julia", "Kofi", "Lena", "Marco",
)
LAST_NAMES = ("Smith", "Garcia", "Tanaka", "Okafor", "Muller", "Rossi", "Kim", "Novak", "Silva", "Haddad",
              "Larsen", "Dubois", "Khan", "Moreau", "Ivanova", "Park")
MESSAGES = ("on my way", "see you soon", "running 10 minutes late", "call me when you can", "thanks!",
            "happy birthday", "lunch at noon?", "got it", "I'll be there at 7", "can you send the file?")
NOTE_TITLES = (
    "Groceries", "Trip ideas", "Book list", "Meeting notes", "Gift ideas", "Recipes", "Workout plan",
    "Packing list", "Passwords hint", "Budget", "Movie list", "Garden", "Car service", "Birthday party",
    "Project plan", "Reading notes", "Wishlist", "Plumber", "Dentist", "Podcast ideas", "House chores",
    "Weekend plan", "Language practice", "Bike repair", "Guest list", "Tax documents", "Study schedule",
)
NOTE_BODIES = ("milk, eggs, bread", "call before Friday", "remember the receipts", "ask about the price",
               "three sets of ten", "check the weather first", "bring the blue folder", "done by Monday")
NEW_NOTE_TITLES = ("Shopping", "Ideas", "To do", "Call mom", "Holiday", "Homework", "Errands", "Pharmacy")
PLACES = ("coffee", "pharmacy", "gas station", "pizza", "museum", "train station", "bakery", "park",
          "hardware store", "library", "post office", "sushi")

#: Settings rows: key -> label variants (the vocabulary a layout seed picks from); ``None`` = a plain entry.
SETTINGS: dict[str, tuple[tuple[str, ...], bool]] = {
    "wifi": (("Wi-Fi", "WLAN", "Wireless network"), True),
    "bluetooth": (("Bluetooth",), True),
    "airplane": (("Airplane mode", "Flight mode"), True),
    "location": (("Location", "Location services"), True),
    "dark_theme": (("Dark theme", "Dark mode"), True),
    "battery_saver": (("Battery saver", "Power saving mode"), True),
    "dnd": (("Do not disturb", "Silent mode"), True),
    "auto_rotate": (("Auto-rotate", "Rotate screen"), True),
    "nfc": (("NFC", "Contactless payments"), True),
    "hotspot": (("Hotspot", "Mobile hotspot"), True),
    "display": (("Display",), False),
    "sound": (("Sound", "Sound & vibration"), False),
    "storage": (("Storage",), False),
    "apps": (("Apps", "Applications"), False),
    "accounts": (("Accounts", "Passwords & accounts"), False),
    "about": (("About phone", "Device info"), False),
}
#: Human names of the toggles as instructions say them (labels vary, the task words do not).
SETTING_NAMES: dict[str, str] = {
    "wifi": "Wi-Fi", "bluetooth": "Bluetooth", "airplane": "airplane mode", "location": "location",
    "dark_theme": "the dark theme", "battery_saver": "battery saver", "dnd": "Do not disturb",
    "auto_rotate": "auto-rotate", "nfc": "NFC", "hotspot": "the mobile hotspot",
}
TOGGLES: tuple[str, ...] = tuple(k for k, (_, is_toggle) in SETTINGS.items() if is_toggle)

#: App key -> label variants. The first seven are the working apps; the rest open an empty screen.
APPS: dict[str, tuple[str, ...]] = {
    "settings": ("Settings",), "messages": ("Messages", "Messaging"), "contacts": ("Contacts", "People"),
    "notes": ("Notes", "Keep notes"), "maps": ("Maps", "Navigation"), "clock": ("Clock", "Alarms"),
    "calculator": ("Calculator",),
    "camera": ("Camera",), "photos": ("Photos", "Gallery"), "music": ("Music",), "weather": ("Weather",),
    "calendar": ("Calendar",), "files": ("Files",), "store": ("Play Store", "App Store"),
}
WORKING_APPS: tuple[str, ...] = ("settings", "messages", "contacts", "notes", "maps", "clock", "calculator")


@dataclass(frozen=True)
class Style:
    """Seeded spacing and looks (dp)."""

    row_dp: int
    pad_dp: int
    icon_cols: int
    accent: str
    contacts_tab: str  # the tab Contacts opens on
    clock_tab: str


@dataclass
class Content:
    """The phone's initial data for one layout seed."""

    seed: int
    style: Style
    app_order: list[str]
    app_labels: dict[str, str]
    settings_order: list[str]
    settings_labels: dict[str, str]
    settings_initial: dict[str, bool]
    contacts: list[tuple[str, str]]  # (name, phone), sorted by name
    favorites: list[str]
    threads: dict[str, list[tuple[str, str]]]  # contact -> [(sender "me"|"them", text)], oldest first
    thread_order: list[str]
    notes: list[tuple[str, str]]  # (title, body), newest first
    alarms: list[tuple[str, bool]]  # ("HH:MM", enabled), sorted by time
    clock: str
    battery: int


@lru_cache(maxsize=512)
def make_content(seed: int) -> Content:
    """The phone content of layout ``seed`` (cached and shared: read-only; ``Phone`` copies what it mutates)."""
    rng = random.Random(f"content:{seed}")
    style = Style(row_dp=rng.choice((56, 64, 72)), pad_dp=rng.choice((12, 16, 20)), icon_cols=rng.choice((4, 5)),
                  accent=rng.choice(sorted(ACCENTS)), contacts_tab=rng.choice(("All", "Favorites")),
                  clock_tab=rng.choice(("Alarm", "Timer")))
    apps = list(APPS)
    rng.shuffle(apps)
    app_labels = {k: rng.choice(v) for k, v in APPS.items()}
    settings_order = list(SETTINGS)
    rng.shuffle(settings_order)
    settings_labels = {k: rng.choice(v) for k, (v, _) in SETTINGS.items()}
    settings_initial = {k: rng.random() < 0.5 for k in TOGGLES}
    names = sorted({f"{f} {rng.choice(LAST_NAMES)}" for f in rng.sample(FIRST_NAMES, rng.randint(26, 34))})
    contacts = [(n, f"+1 555 {rng.randint(100, 999)} {rng.randint(1000, 9999)}") for n in names]
    favorites = sorted(rng.sample(names, 5))
    thread_order = rng.sample(names, rng.randint(8, 12))
    threads = {n: [(rng.choice(("me", "them")), rng.choice(MESSAGES)) for _ in range(rng.randint(1, 4))]
               for n in thread_order}
    notes = [(title, rng.choice(NOTE_BODIES)) for title in rng.sample(NOTE_TITLES, rng.randint(14, 22))]
    times = {f"{rng.randint(5, 9):02d}:{rng.choice((0, 15, 30, 45)):02d}" for _ in range(rng.randint(2, 4))}
    alarms = [(tm, rng.random() < 0.6) for tm in sorted(times)]
    return Content(seed, style, apps, app_labels, settings_order, settings_labels, settings_initial, contacts,
                   favorites, threads, thread_order, notes, alarms, clock=f"{rng.randint(7, 22)}:{rng.randint(0, 59):02d}",
                   battery=rng.randint(15, 100))


__all__ = ["APPS", "Content", "FIRST_NAMES", "MESSAGES", "NEW_NOTE_TITLES", "NOTE_TITLES", "PLACES", "SETTINGS",
           "SETTING_NAMES", "Style", "TOGGLES", "WORKING_APPS", "make_content"]
