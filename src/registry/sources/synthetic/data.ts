/**
 * Word lists for the synthetic registry: Polish names, streets, trades with their PKD codes and
 * the words companies in them use in their names. Every PKD code here exists in
 * `data/dictionaries/pkd.json` (checked by synthetic.test.ts); names are taken from there.
 */

export const MALE_FIRST_NAMES = [
  'Jan', 'Piotr', 'Krzysztof', 'Andrzej', 'Tomasz', 'Paweł', 'Michał', 'Marcin', 'Marek', 'Grzegorz',
  'Adam', 'Łukasz', 'Zbigniew', 'Jerzy', 'Tadeusz', 'Mateusz', 'Dariusz', 'Mariusz', 'Wojciech', 'Ryszard',
  'Jakub', 'Henryk', 'Robert', 'Rafał', 'Kazimierz', 'Jacek', 'Kamil', 'Maciej', 'Sławomir', 'Józef',
  'Artur', 'Damian', 'Sebastian', 'Bartosz', 'Daniel', 'Dawid', 'Przemysław', 'Karol', 'Szymon', 'Filip',
] as const;

export const FEMALE_FIRST_NAMES = [
  'Anna', 'Maria', 'Katarzyna', 'Małgorzata', 'Agnieszka', 'Barbara', 'Ewa', 'Krystyna', 'Magdalena', 'Elżbieta',
  'Joanna', 'Aleksandra', 'Monika', 'Zofia', 'Teresa', 'Danuta', 'Natalia', 'Julia', 'Karolina', 'Marta',
  'Beata', 'Dorota', 'Halina', 'Jadwiga', 'Justyna', 'Jolanta', 'Grażyna', 'Iwona', 'Paulina', 'Renata',
  'Sylwia', 'Patrycja', 'Agata', 'Alicja', 'Emilia', 'Weronika', 'Izabela', 'Ewelina', 'Kinga', 'Marzena',
] as const;

/** [masculine, feminine] forms. */
export const SURNAMES: ReadonlyArray<readonly [string, string]> = [
  ['Nowak', 'Nowak'], ['Kowalski', 'Kowalska'], ['Wiśniewski', 'Wiśniewska'], ['Wójcik', 'Wójcik'],
  ['Kowalczyk', 'Kowalczyk'], ['Kamiński', 'Kamińska'], ['Lewandowski', 'Lewandowska'], ['Zieliński', 'Zielińska'],
  ['Szymański', 'Szymańska'], ['Woźniak', 'Woźniak'], ['Dąbrowski', 'Dąbrowska'], ['Kozłowski', 'Kozłowska'],
  ['Jankowski', 'Jankowska'], ['Mazur', 'Mazur'], ['Wojciechowski', 'Wojciechowska'], ['Kwiatkowski', 'Kwiatkowska'],
  ['Krawczyk', 'Krawczyk'], ['Kaczmarek', 'Kaczmarek'], ['Piotrowski', 'Piotrowska'], ['Grabowski', 'Grabowska'],
  ['Zając', 'Zając'], ['Pawłowski', 'Pawłowska'], ['Michalski', 'Michalska'], ['Król', 'Król'],
  ['Wieczorek', 'Wieczorek'], ['Jabłoński', 'Jabłońska'], ['Wróbel', 'Wróbel'], ['Nowakowski', 'Nowakowska'],
  ['Majewski', 'Majewska'], ['Olszewski', 'Olszewska'], ['Stępień', 'Stępień'], ['Malinowski', 'Malinowska'],
  ['Jaworski', 'Jaworska'], ['Adamczyk', 'Adamczyk'], ['Dudek', 'Dudek'], ['Nowicki', 'Nowicka'],
  ['Pawlak', 'Pawlak'], ['Górski', 'Górska'], ['Witkowski', 'Witkowska'], ['Walczak', 'Walczak'],
  ['Sikora', 'Sikora'], ['Baran', 'Baran'], ['Rutkowski', 'Rutkowska'], ['Michalak', 'Michalak'],
  ['Szewczyk', 'Szewczyk'], ['Ostrowski', 'Ostrowska'], ['Tomaszewski', 'Tomaszewska'], ['Pietrzak', 'Pietrzak'],
  ['Marciniak', 'Marciniak'], ['Wróblewski', 'Wróblewska'], ['Zalewski', 'Zalewska'], ['Jakubowski', 'Jakubowska'],
  ['Jasiński', 'Jasińska'], ['Zawadzki', 'Zawadzka'], ['Sadowski', 'Sadowska'], ['Bąk', 'Bąk'],
  ['Chmielewski', 'Chmielewska'], ['Włodarczyk', 'Włodarczyk'], ['Borkowski', 'Borkowska'], ['Czarnecki', 'Czarnecka'],
  ['Sawicki', 'Sawicka'], ['Sokołowski', 'Sokołowska'], ['Urbański', 'Urbańska'], ['Kubiak', 'Kubiak'],
  ['Maciejewski', 'Maciejewska'], ['Szczepański', 'Szczepańska'], ['Kucharski', 'Kucharska'], ['Wilk', 'Wilk'],
  ['Kalinowski', 'Kalinowska'], ['Lis', 'Lis'], ['Mazurek', 'Mazurek'], ['Wysocki', 'Wysocka'],
  ['Adamski', 'Adamska'], ['Kaźmierczak', 'Kaźmierczak'], ['Wasilewski', 'Wasilewska'], ['Sobczak', 'Sobczak'],
  ['Czerwiński', 'Czerwińska'], ['Andrzejewski', 'Andrzejewska'], ['Cieślak', 'Cieślak'], ['Głowacki', 'Głowacka'],
  ['Zakrzewski', 'Zakrzewska'], ['Kołodziej', 'Kołodziej'], ['Sikorski', 'Sikorska'], ['Krajewski', 'Krajewska'],
  ['Gajewski', 'Gajewska'], ['Szymczak', 'Szymczak'], ['Szulc', 'Szulc'], ['Baranowski', 'Baranowska'],
  ['Laskowski', 'Laskowska'], ['Brzeziński', 'Brzezińska'], ['Makowski', 'Makowska'], ['Ziółkowski', 'Ziółkowska'],
  ['Przybylski', 'Przybylska'], ['Domański', 'Domańska'], ['Nowacki', 'Nowacka'], ['Borowski', 'Borowska'],
];

export const STREETS = [
  'Mickiewicza', 'Słowackiego', 'Kościuszki', 'Sienkiewicza', 'Piłsudskiego', 'Kopernika', 'Polna', 'Leśna',
  'Ogrodowa', 'Lipowa', 'Szkolna', 'Kościelna', 'Łąkowa', 'Kwiatowa', 'Słoneczna', 'Krótka', 'Długa',
  'Brzozowa', 'Zielona', 'Sportowa', 'Parkowa', 'Spacerowa', 'Cicha', 'Górna', 'Wiejska', 'Kolejowa',
  'Dworcowa', 'Przemysłowa', 'Fabryczna', 'Różana', 'Jasna', 'Akacjowa', 'Klonowa', 'Sosnowa', 'Dębowa',
  'Wierzbowa', 'Kasztanowa', 'Topolowa', 'Nowa', 'Stawowa', 'Rzeczna', 'Młyńska', 'Piaskowa', 'Graniczna',
  'Środkowa', 'Mostowa', 'Handlowa', 'Targowa', 'Pocztowa', 'Żeromskiego', 'Reymonta', 'Prusa',
  'Konopnickiej', 'Orzeszkowej', 'Chopina', 'Moniuszki', 'Batorego', 'Chrobrego', 'Kasprowicza',
  'Wyspiańskiego', 'Norwida', 'Fredry', 'Kilińskiego', 'Traugutta', 'Kochanowskiego', 'Matejki', 'Staszica',
  'Paderewskiego', 'Okrzei', 'Narutowicza', 'Grunwaldzka', 'Warszawska', 'Krakowska', 'Poznańska', 'Gdańska',
  'Wrocławska', 'Lubelska', 'Toruńska', 'Łódzka', 'Szczecińska', 'Katowicka', 'Bydgoska', 'Radomska',
  'Kielecka', 'Przemysłowa', 'Składowa', 'Magazynowa', 'Rolnicza', 'Ks. Popiełuszki', 'Bohaterów Westerplatte',
] as const;

/** Streets written with `al.` (avenues) or `pl.` (squares) rather than `ul.`. */
export const AVENUES = [
  'al. Jana Pawła II', 'al. Wojska Polskiego', 'al. Niepodległości', 'al. Solidarności', 'al. Armii Krajowej',
  'al. 3 Maja', 'al. Jerozolimskie', 'al. Grunwaldzka', 'pl. Wolności', 'pl. Kościuszki', 'Rynek',
] as const;

/** Syllables for invented brand names (`TERMOPOL`, `EUROBUD`). */
export const BRAND_HEADS = [
  'NOVA', 'ALFA', 'MEGA', 'EURO', 'POL', 'TERMO', 'EKO', 'INTER', 'MAX', 'PRO', 'AGRO', 'STAL', 'DREW', 'ELEKTRO',
  'AUTO', 'MED', 'TECH', 'INFO', 'GEO', 'HYDRO', 'KOM', 'LUX', 'VITA', 'PRIMA', 'OPTI', 'SAN', 'DOM', 'ART',
  'BIO', 'TRANS', 'MULTI', 'POLI', 'UNI', 'VECTOR', 'ORBI', 'ASTRA', 'SOLAR', 'KRAK', 'MAZ', 'WIS',
] as const;
export const BRAND_TAILS = [
  'BUD', 'TRANS', 'POL', 'MED', 'SOFT', 'TECH', 'MAX', 'EX', 'COM', 'NET', 'LAND', 'STAL', 'GAZ', 'TOR', 'VIS',
  'ROL', 'PLAST', 'MET', 'LAB', 'SYSTEM', 'SERWIS', 'DOM', 'TEX', 'FARM', 'LOG', 'MAR', 'TERM', 'LUX', 'ON', 'IA',
] as const;
export const BRAND_WORDS = ['GROUP', 'POLSKA', 'SERVICE', 'PARTNERS', 'CENTRUM', 'PLUS', 'INVEST', 'HOLDING'] as const;

/** A line of business: its PKD codes in both classifications and the words names in it use. */
export interface Trade {
  readonly key: string;
  /** Relative frequency among sole proprietorships and among companies. */
  readonly jdgWeight: number;
  readonly companyWeight: number;
  /** Primary code first, then codes often registered beside it. */
  readonly pkd2007: readonly string[];
  readonly pkd2025: readonly string[];
  /** Descriptors sole traders put after their name (`Jan Nowak Usługi Remontowe`). */
  readonly jdgNames: readonly string[];
  /** Words companies put in their names (`KOWALSKI BUDOWNICTWO SP. Z O.O.`). */
  readonly companyWords: readonly string[];
}

export const TRADES: readonly Trade[] = [
  { key: 'construction', jdgWeight: 6, companyWeight: 8, pkd2007: ['4120Z', '4399Z', '4321Z', '4322Z', '4333Z', '4334Z', '4339Z', '4391Z', '4312Z', '4110Z'], pkd2025: ['4100A', '4100B', '4399Z', '4321Z', '4322Z', '4333Z', '4334Z', '4335Z', '4391Z', '4312Z', '6812A'], jdgNames: ['Usługi Budowlane', 'Budownictwo', 'Zakład Remontowo-Budowlany', 'Firma Budowlana'], companyWords: ['BUDOWNICTWO', 'BUD', 'BUDOWA', 'KONSTRUKCJE', 'GRUPA BUDOWLANA'] },
  { key: 'finishing', jdgWeight: 6, companyWeight: 2, pkd2007: ['4339Z', '4333Z', '4334Z', '4332Z', '4331Z', '4752Z'], pkd2025: ['4335Z', '4333Z', '4334Z', '4332Z', '4331Z', '4752Z'], jdgNames: ['Usługi Remontowe', 'Remonty i Wykończenia Wnętrz', 'Usługi Remontowo-Wykończeniowe'], companyWords: ['REMONTY', 'WYKOŃCZENIA', 'INTERIOR'] },
  { key: 'electrical', jdgWeight: 3, companyWeight: 2, pkd2007: ['4321Z', '4322Z', '3314Z', '4752Z', '7112Z'], pkd2025: ['4321Z', '4322Z', '3314Z', '4752Z', '7112B'], jdgNames: ['Instalacje Elektryczne', 'Usługi Elektryczne', 'Elektro-Instal'], companyWords: ['ELEKTRO', 'ENERGY', 'ELECTRIC', 'INSTAL'] },
  { key: 'plumbing', jdgWeight: 2.5, companyWeight: 1.5, pkd2007: ['4322Z', '4321Z', '4329Z', '3312Z'], pkd2025: ['4322Z', '4321Z', '4324Z', '3312Z'], jdgNames: ['Instalacje Sanitarne', 'Usługi Hydrauliczne', 'Hydraulika'], companyWords: ['INSTAL', 'TERM', 'HYDRO', 'KLIMA'] },
  { key: 'roofing', jdgWeight: 1.5, companyWeight: 0.5, pkd2007: ['4391Z', '4399Z', '4332Z'], pkd2025: ['4341Z', '4399Z', '4332Z'], jdgNames: ['Usługi Dekarskie', 'Dekarstwo', 'Dachy'], companyWords: ['DACHY', 'DEKARZ'] },
  { key: 'transport', jdgWeight: 5, companyWeight: 6, pkd2007: ['4941Z', '5229C', '5210B', '4942Z', '7712Z', '5224C', '4520Z'], pkd2025: ['4941Z', '5231Z', '5210B', '4942Z', '7712Z', '5224C', '9531A'], jdgNames: ['Transport Drogowy', 'Usługi Transportowe', 'Transport Ciężarowy', 'Przewóz Towarów'], companyWords: ['TRANS', 'LOGISTICS', 'TRANSPORT', 'SPEDYCJA', 'CARGO'] },
  { key: 'taxi', jdgWeight: 2.5, companyWeight: 0.3, pkd2007: ['4932Z', '4939Z', '7711Z'], pkd2025: ['4933Z', '4939Z', '7711Z'], jdgNames: ['Przewóz Osób', 'Usługi Taxi', 'Taxi'], companyWords: ['TAXI', 'TRAVEL'] },
  { key: 'software', jdgWeight: 5, companyWeight: 5, pkd2007: ['6201Z', '6202Z', '6209Z', '6311Z', '6312Z', '5829Z', '7022Z', '8559B', '6399Z'], pkd2025: ['6210B', '6220B', '6290Z', '6310D', '5829Z', '7020Z', '8559B', '6210A'], jdgNames: ['Usługi Informatyczne', 'Programowanie', 'IT Solutions', 'Software Development'], companyWords: ['SOFTWARE', 'TECH', 'SYSTEMS', 'IT', 'DIGITAL', 'SOLUTIONS', 'LABS'] },
  { key: 'it-consulting', jdgWeight: 3, companyWeight: 2, pkd2007: ['6202Z', '6201Z', '6209Z', '7022Z'], pkd2025: ['6220B', '6210B', '6290Z', '7020Z'], jdgNames: ['Doradztwo Informatyczne', 'IT Consulting', 'Usługi IT'], companyWords: ['CONSULTING', 'IT', 'DATA'] },
  { key: 'accounting', jdgWeight: 2.5, companyWeight: 2, pkd2007: ['6920Z', '6910Z', '7022Z', '8211Z', '8219Z'], pkd2025: ['6920A', '6920B', '7020Z', '8210Z'], jdgNames: ['Biuro Rachunkowe', 'Usługi Księgowe', 'Kancelaria Podatkowa'], companyWords: ['FINANSE', 'KSIĘGOWOŚĆ', 'TAX', 'AUDYT', 'RACHUNKOWOŚĆ'] },
  { key: 'consulting', jdgWeight: 4, companyWeight: 5, pkd2007: ['7022Z', '7021Z', '7320Z', '8559B', '7490Z', '6619Z'], pkd2025: ['7020Z', '7330B', '7320Z', '8559B', '7499Z', '6619Z'], jdgNames: ['Doradztwo Gospodarcze', 'Consulting', 'Usługi Doradcze'], companyWords: ['CONSULTING', 'DORADZTWO', 'PARTNERS', 'GROUP', 'MANAGEMENT', 'ADVISORS'] },
  { key: 'grocery', jdgWeight: 3, companyWeight: 2, pkd2007: ['4711Z', '4729Z', '4725Z', '4721Z', '4722Z', '4724Z'], pkd2025: ['4711Z', '4727Z', '4725Z', '4721Z', '4722Z', '4724Z'], jdgNames: ['Sklep Spożywczy', 'Handel Artykułami Spożywczymi', 'Delikatesy'], companyWords: ['MARKET', 'DELIKATESY', 'HANDEL'] },
  { key: 'online-retail', jdgWeight: 4, companyWeight: 3, pkd2007: ['4791Z', '4719Z', '4778Z', '4771Z', '4690Z', '7311Z', '5320Z'], pkd2025: ['4712Z', '4778Z', '4771Z', '4690Z', '7311Z', '5320Z'], jdgNames: ['Sklep Internetowy', 'Handel Internetowy', 'E-commerce'], companyWords: ['SHOP', 'STORE', 'E-COMMERCE', 'ONLINE'] },
  { key: 'wholesale', jdgWeight: 2, companyWeight: 6, pkd2007: ['4690Z', '4619Z', '4649Z', '4669Z', '4675Z', '5210B'], pkd2025: ['4690Z', '4619Z', '4649Z', '4664Z', '4685B', '5210B'], jdgNames: ['Hurtownia', 'Handel Hurtowy', 'Import-Eksport'], companyWords: ['TRADE', 'IMPORT-EXPORT', 'DYSTRYBUCJA', 'HURT', 'TRADING', 'HANDEL'] },
  { key: 'car-repair', jdgWeight: 3, companyWeight: 1.5, pkd2007: ['4520Z', '4532Z', '4531Z', '4511Z', '5221Z'], pkd2025: ['9531A', '9531B', '4782Z', '4672Z', '5221B'], jdgNames: ['Mechanika Pojazdowa', 'Auto Serwis', 'Warsztat Samochodowy'], companyWords: ['AUTO', 'MOTO', 'SERWIS', 'CAR'] },
  { key: 'car-sales', jdgWeight: 1, companyWeight: 1.5, pkd2007: ['4511Z', '4519Z', '4520Z', '4532Z', '7711Z'], pkd2025: ['4781Z', '4671Z', '9531A', '4782Z', '7711Z'], jdgNames: ['Auto Handel', 'Handel Samochodami', 'Komis Samochodowy'], companyWords: ['AUTO', 'CARS', 'MOTORS'] },
  { key: 'restaurant', jdgWeight: 2.5, companyWeight: 2, pkd2007: ['5610A', '5610B', '5621Z', '5629Z', '5630Z'], pkd2025: ['5611Z', '5612Z', '5621Z', '5622Z', '5630Z'], jdgNames: ['Restauracja', 'Gastronomia', 'Bistro', 'Pizzeria'], companyWords: ['GASTRO', 'FOOD', 'RESTAURACJA', 'BISTRO'] },
  { key: 'catering', jdgWeight: 1, companyWeight: 1, pkd2007: ['5621Z', '5629Z', '5610A', '8230Z'], pkd2025: ['5621Z', '5622Z', '5611Z', '8230Z'], jdgNames: ['Catering', 'Usługi Cateringowe'], companyWords: ['CATERING', 'FOOD'] },
  { key: 'hairdresser', jdgWeight: 3, companyWeight: 0.3, pkd2007: ['9602Z', '4775Z', '9604Z'], pkd2025: ['9621Z', '9622Z', '4775Z'], jdgNames: ['Salon Fryzjerski', 'Studio Fryzur', 'Fryzjerstwo'], companyWords: ['HAIR', 'STUDIO'] },
  { key: 'beauty', jdgWeight: 3, companyWeight: 0.5, pkd2007: ['9602Z', '9604Z', '4775Z'], pkd2025: ['9622Z', '9623Z', '4775Z', '9621Z'], jdgNames: ['Gabinet Kosmetyczny', 'Studio Urody', 'Salon Kosmetyczny'], companyWords: ['BEAUTY', 'SPA', 'COSMETICS'] },
  { key: 'doctor', jdgWeight: 3, companyWeight: 1, pkd2007: ['8621Z', '8622Z', '8690E'], pkd2025: ['8621Z', '8622Z', '8699D'], jdgNames: ['Praktyka Lekarska', 'Gabinet Lekarski', 'Indywidualna Praktyka Lekarska'], companyWords: ['MED', 'CLINIC', 'MEDICAL', 'CENTRUM MEDYCZNE'] },
  { key: 'specialist', jdgWeight: 2, companyWeight: 1, pkd2007: ['8622Z', '8621Z', '8690E'], pkd2025: ['8622Z', '8621Z', '8691A'], jdgNames: ['Specjalistyczna Praktyka Lekarska', 'Gabinet Specjalistyczny'], companyWords: ['MEDICA', 'CLINIC'] },
  { key: 'dentist', jdgWeight: 1.5, companyWeight: 0.7, pkd2007: ['8623Z', '8622Z', '3250Z'], pkd2025: ['8623Z', '8622Z', '3250A'], jdgNames: ['Gabinet Stomatologiczny', 'Praktyka Dentystyczna'], companyWords: ['DENT', 'DENTAL', 'STOMATOLOGIA'] },
  { key: 'physio', jdgWeight: 1.5, companyWeight: 0.4, pkd2007: ['8690A', '8690E', '9604Z'], pkd2025: ['8695Z', '8699D', '9313Z'], jdgNames: ['Fizjoterapia', 'Gabinet Rehabilitacji'], companyWords: ['FIZJO', 'REHABILITACJA'] },
  { key: 'psychology', jdgWeight: 1, companyWeight: 0.2, pkd2007: ['8690E', '8559B', '8899Z'], pkd2025: ['8693Z', '8559B', '8899Z'], jdgNames: ['Gabinet Psychologiczny', 'Psychoterapia'], companyWords: ['PSYCHE'] },
  { key: 'rental', jdgWeight: 2, companyWeight: 5, pkd2007: ['6820Z', '6810Z', '6831Z', '6832Z', '4110Z'], pkd2025: ['6820Z', '6811Z', '6831Z', '6832B', '6812A'], jdgNames: ['Wynajem Nieruchomości', 'Wynajem Mieszkań'], companyWords: ['NIERUCHOMOŚCI', 'PROPERTY', 'INVEST', 'ESTATE', 'REAL ESTATE'] },
  { key: 'estate-agency', jdgWeight: 1.5, companyWeight: 1.5, pkd2007: ['6831Z', '6832Z', '6820Z', '7022Z'], pkd2025: ['6831Z', '6832B', '6820Z', '6832A'], jdgNames: ['Biuro Nieruchomości', 'Pośrednictwo w Obrocie Nieruchomościami'], companyWords: ['NIERUCHOMOŚCI', 'HOME', 'ESTATE'] },
  { key: 'development', jdgWeight: 0.3, companyWeight: 3, pkd2007: ['4110Z', '4120Z', '6810Z', '6820Z'], pkd2025: ['6812A', '4100A', '6811Z', '6820Z'], jdgNames: ['Inwestycje Budowlane'], companyWords: ['DEVELOPMENT', 'INVESTMENT', 'DEWELOPER', 'RESIDENCE'] },
  { key: 'architecture', jdgWeight: 1, companyWeight: 0.7, pkd2007: ['7111Z', '7112Z', '7410Z'], pkd2025: ['7111Z', '7112B', '7413Z'], jdgNames: ['Pracownia Architektoniczna', 'Biuro Projektowe'], companyWords: ['ARCHITEKCI', 'STUDIO', 'PROJEKT'] },
  { key: 'engineering', jdgWeight: 1.5, companyWeight: 1.5, pkd2007: ['7112Z', '7111Z', '7120B', '4399Z'], pkd2025: ['7112B', '7111Z', '7120C', '4399Z'], jdgNames: ['Usługi Projektowe', 'Nadzór Budowlany', 'Usługi Inżynierskie'], companyWords: ['ENGINEERING', 'PROJEKT', 'INŻYNIERIA'] },
  { key: 'marketing', jdgWeight: 2, companyWeight: 2, pkd2007: ['7311Z', '7312A', '7021Z', '7320Z', '5819Z', '7410Z'], pkd2025: ['7311Z', '7312Z', '7330B', '7320Z', '7412Z'], jdgNames: ['Agencja Reklamowa', 'Marketing', 'Usługi Marketingowe'], companyWords: ['MEDIA', 'MARKETING', 'ADVERTISING', 'COMMUNICATION', 'CREATIVE'] },
  { key: 'design', jdgWeight: 1.5, companyWeight: 0.5, pkd2007: ['7410Z', '7311Z', '7420Z', '1813Z'], pkd2025: ['7412Z', '7311Z', '7420Z', '7414Z'], jdgNames: ['Studio Graficzne', 'Projektowanie Graficzne'], companyWords: ['DESIGN', 'STUDIO', 'CREATIVE'] },
  { key: 'photo', jdgWeight: 1, companyWeight: 0.2, pkd2007: ['7420Z', '7410Z', '5911Z'], pkd2025: ['7420Z', '7412Z', '5911Z'], jdgNames: ['Fotografia', 'Studio Fotograficzne'], companyWords: ['FOTO', 'PHOTO'] },
  { key: 'translations', jdgWeight: 0.7, companyWeight: 0.2, pkd2007: ['7430Z', '8559B'], pkd2025: ['7430Z', '8559A'], jdgNames: ['Biuro Tłumaczeń', 'Tłumaczenia'], companyWords: ['TRANSLATIONS', 'LINGUA'] },
  { key: 'cleaning', jdgWeight: 2, companyWeight: 1.5, pkd2007: ['8121Z', '8122Z', '8129Z', '8130Z'], pkd2025: ['8121Z', '8122B', '8123B', '8130Z'], jdgNames: ['Usługi Sprzątające', 'Firma Sprzątająca', 'Czystość'], companyWords: ['CLEAN', 'SERWIS', 'FACILITY'] },
  { key: 'gardening', jdgWeight: 1.5, companyWeight: 0.5, pkd2007: ['8130Z', '0161Z', '4399Z'], pkd2025: ['8130Z', '0161Z', '4399Z'], jdgNames: ['Usługi Ogrodnicze', 'Zieleń', 'Ogrody'], companyWords: ['GARDEN', 'OGRODY', 'ZIELEŃ'] },
  { key: 'training', jdgWeight: 2, companyWeight: 1.5, pkd2007: ['8559B', '8559A', '7022Z', '8560Z'], pkd2025: ['8559B', '8559D', '7020Z', '8569Z'], jdgNames: ['Szkolenia', 'Centrum Szkoleniowe', 'Usługi Szkoleniowe'], companyWords: ['ACADEMY', 'EDUKACJA', 'TRAINING', 'SZKOLENIA'] },
  { key: 'language-school', jdgWeight: 1, companyWeight: 0.5, pkd2007: ['8559A', '8559B', '7430Z'], pkd2025: ['8559A', '8559B', '7430Z'], jdgNames: ['Szkoła Językowa', 'Nauka Języków Obcych'], companyWords: ['LANGUAGE', 'LINGUA', 'SCHOOL'] },
  { key: 'driving-school', jdgWeight: 0.7, companyWeight: 0.2, pkd2007: ['8553Z', '8559B'], pkd2025: ['8553Z', '8559B'], jdgNames: ['Szkoła Jazdy', 'Ośrodek Szkolenia Kierowców'], companyWords: ['AUTO SZKOŁA', 'DRIVE'] },
  { key: 'fitness', jdgWeight: 1, companyWeight: 0.5, pkd2007: ['9313Z', '9311Z', '9319Z', '8551Z', '9604Z'], pkd2025: ['9313Z', '9311Z', '9319Z', '8551Z'], jdgNames: ['Trening Personalny', 'Klub Fitness'], companyWords: ['FITNESS', 'GYM', 'SPORT'] },
  { key: 'furniture', jdgWeight: 1, companyWeight: 1, pkd2007: ['3109Z', '3101Z', '3102Z', '1623Z', '4332Z'], pkd2025: ['3100Z', '1623Z', '4332Z', '9524Z'], jdgNames: ['Stolarstwo', 'Produkcja Mebli', 'Meble na Wymiar'], companyWords: ['MEBLE', 'STOLARKA', 'FURNITURE', 'WOOD'] },
  { key: 'metal', jdgWeight: 1, companyWeight: 2, pkd2007: ['2511Z', '2562Z', '2599Z', '3311Z', '4399Z'], pkd2025: ['2511Z', '2553Z', '2599Z', '3311Z', '4399Z'], jdgNames: ['Ślusarstwo', 'Usługi Ślusarskie', 'Konstrukcje Stalowe'], companyWords: ['STAL', 'METAL', 'STEEL', 'KONSTRUKCJE'] },
  { key: 'bakery', jdgWeight: 0.5, companyWeight: 0.8, pkd2007: ['1071Z', '1072Z', '4724Z', '1082Z'], pkd2025: ['1071Z', '1072Z', '4724Z', '1082Z'], jdgNames: ['Piekarnia', 'Cukiernia', 'Piekarnia-Cukiernia'], companyWords: ['PIEKARNIA', 'BAKERY'] },
  { key: 'agri-services', jdgWeight: 1, companyWeight: 0.5, pkd2007: ['0161Z', '0162Z', '0111Z', '4661Z'], pkd2025: ['0161Z', '0162Z', '0111Z', '4661Z'], jdgNames: ['Usługi Rolnicze', 'Usługi Agrotechniczne'], companyWords: ['AGRO', 'ROL'] },
  { key: 'hotel', jdgWeight: 0.3, companyWeight: 1, pkd2007: ['5510Z', '5520Z', '5610A', '9329Z'], pkd2025: ['5510Z', '5520Z', '5611Z', '9329B'], jdgNames: ['Hotel', 'Pensjonat'], companyWords: ['HOTEL', 'RESORT', 'SPA'] },
  { key: 'accommodation', jdgWeight: 1.5, companyWeight: 0.5, pkd2007: ['5520Z', '5590Z', '6820Z'], pkd2025: ['5520Z', '5590Z', '6820Z'], jdgNames: ['Apartamenty', 'Noclegi', 'Agroturystyka', 'Wynajem Pokoi'], companyWords: ['APARTMENTS', 'APARTAMENTY'] },
  { key: 'legal', jdgWeight: 1.5, companyWeight: 0.5, pkd2007: ['6910Z', '6920Z', '7022Z'], pkd2025: ['6910Z', '6920B', '7020Z'], jdgNames: ['Kancelaria Adwokacka', 'Kancelaria Radcy Prawnego', 'Kancelaria Prawna'], companyWords: ['LEGAL', 'KANCELARIA', 'LAW'] },
  { key: 'courier', jdgWeight: 1.5, companyWeight: 0.5, pkd2007: ['5320Z', '4941Z', '5229C'], pkd2025: ['5320Z', '4941Z', '5231Z'], jdgNames: ['Usługi Kurierskie', 'Kurier'], companyWords: ['EXPRESS', 'KURIER', 'DELIVERY'] },
  { key: 'logistics', jdgWeight: 0.2, companyWeight: 1.5, pkd2007: ['5210B', '5224C', '5229C', '4941Z'], pkd2025: ['5210B', '5224C', '5225Z', '4941Z'], jdgNames: ['Usługi Magazynowe'], companyWords: ['LOGISTICS', 'LOGISTYKA', 'WAREHOUSE'] },
  { key: 'clothing', jdgWeight: 1.5, companyWeight: 1, pkd2007: ['4771Z', '4772Z', '4791Z', '4642Z'], pkd2025: ['4771Z', '4772Z', '4642Z', '4751Z'], jdgNames: ['Sklep Odzieżowy', 'Butik', 'Moda'], companyWords: ['FASHION', 'MODA', 'STYLE'] },
  { key: 'pharmacy', jdgWeight: 0.3, companyWeight: 0.8, pkd2007: ['4773Z', '4774Z', '4775Z'], pkd2025: ['4773Z', '4774Z', '4775Z'], jdgNames: ['Apteka'], companyWords: ['APTEKA', 'PHARMA'] },
  { key: 'vet', jdgWeight: 0.7, companyWeight: 0.3, pkd2007: ['7500Z', '4776Z'], pkd2025: ['7500Z', '4776B'], jdgNames: ['Gabinet Weterynaryjny', 'Przychodnia Weterynaryjna'], companyWords: ['VET', 'ZOO'] },
  { key: 'insurance', jdgWeight: 2, companyWeight: 0.5, pkd2007: ['6622Z', '6619Z', '6499Z'], pkd2025: ['6622Z', '6619Z', '6499Z'], jdgNames: ['Agencja Ubezpieczeniowa', 'Ubezpieczenia', 'Doradztwo Finansowe'], companyWords: ['UBEZPIECZENIA', 'FINANCE', 'INSURANCE'] },
  { key: 'security', jdgWeight: 0.3, companyWeight: 0.8, pkd2007: ['8010Z', '8020Z', '8121Z'], pkd2025: ['8009Z', '8001Z', '8121Z'], jdgNames: ['Usługi Ochroniarskie'], companyWords: ['SECURITY', 'OCHRONA', 'PROTECT'] },
  { key: 'recruitment', jdgWeight: 0.5, companyWeight: 1, pkd2007: ['7810Z', '7820Z', '7830Z', '7022Z'], pkd2025: ['7810Z', '7820Z', '7020Z'], jdgNames: ['Agencja Pracy', 'Doradztwo Personalne'], companyWords: ['HR', 'JOB', 'WORK', 'STAFF'] },
  { key: 'events', jdgWeight: 1, companyWeight: 0.7, pkd2007: ['8230Z', '9329Z', '5621Z', '7739Z'], pkd2025: ['8230Z', '9329B', '5621Z', '7739Z'], jdgNames: ['Organizacja Imprez', 'Eventy', 'Wedding Planner'], companyWords: ['EVENT', 'EVENTS'] },
  { key: 'computer-repair', jdgWeight: 1, companyWeight: 0.3, pkd2007: ['9511Z', '9512Z', '4741Z', '6209Z'], pkd2025: ['9510Z', '4740Z', '6290Z'], jdgNames: ['Serwis Komputerowy', 'Naprawa Komputerów'], companyWords: ['SERWIS', 'COMPUTER'] },
  { key: 'funeral', jdgWeight: 0.3, companyWeight: 0.2, pkd2007: ['9603Z', '4778Z'], pkd2025: ['9630Z', '4778Z'], jdgNames: ['Zakład Pogrzebowy', 'Usługi Pogrzebowe'], companyWords: ['MEMORIA'] },
  { key: 'printing', jdgWeight: 0.4, companyWeight: 0.6, pkd2007: ['1812Z', '1813Z', '1814Z', '7311Z'], pkd2025: ['1812Z', '1813Z', '1814Z', '7311Z'], jdgNames: ['Drukarnia', 'Usługi Poligraficzne'], companyWords: ['PRINT', 'DRUK', 'POLIGRAFIA'] },
  { key: 'fuel', jdgWeight: 0.2, companyWeight: 0.5, pkd2007: ['4730Z', '4711Z', '4520Z'], pkd2025: ['4730Z', '4711Z', '9531C'], jdgNames: ['Stacja Paliw'], companyWords: ['PALIWA', 'PETROL', 'FUEL'] },
  { key: 'food-wholesale', jdgWeight: 0.5, companyWeight: 1.5, pkd2007: ['4639Z', '4631Z', '4638Z', '4617Z'], pkd2025: ['4639Z', '4631Z', '4638Z', '4617Z'], jdgNames: ['Hurtownia Spożywcza'], companyWords: ['FOOD', 'HURT', 'DYSTRYBUCJA'] },
  { key: 'building-materials', jdgWeight: 0.5, companyWeight: 1.5, pkd2007: ['4673Z', '4674Z', '4752Z', '4941Z'], pkd2025: ['4683Z', '4684Z', '4752Z', '4941Z'], jdgNames: ['Skład Budowlany', 'Materiały Budowlane'], companyWords: ['MATERIAŁY BUDOWLANE', 'SKŁAD', 'BUDMAT'] },
];

/** Trades of organisations that are not businesses; picked by legal form, never by weight. */
export const NONPROFIT_TRADE: Trade = { key: 'nonprofit', jdgWeight: 0, companyWeight: 0, pkd2007: ['9499Z', '8899Z', '8559B', '9312Z'], pkd2025: ['9499Z', '8899Z', '8559B', '9312Z'], jdgNames: [], companyWords: [] };
export const SPORTS_CLUB_TRADE: Trade = { key: 'sports-club', jdgWeight: 0, companyWeight: 0, pkd2007: ['9312Z', '9319Z', '8551Z'], pkd2025: ['9312Z', '9319Z', '8551Z'], jdgNames: [], companyWords: [] };
export const HOUSING_COOP_TRADE: Trade = { key: 'housing-coop', jdgWeight: 0, companyWeight: 0, pkd2007: ['6832Z', '6820Z', '8110Z'], pkd2025: ['6832B', '6820Z', '8110Z'], jdgNames: [], companyWords: [] };
export const FARM_COOP_TRADE: Trade = { key: 'farm-coop', jdgWeight: 0, companyWeight: 0, pkd2007: ['0150Z', '0111Z', '0146Z'], pkd2025: ['0150Z', '0111Z', '0146Z'], jdgNames: [], companyWords: [] };

export const FOUNDATION_NAMES = [
  'POMOCY DZIECIOM', 'ROZWOJU PRZEDSIĘBIORCZOŚCI', 'EDUKACJI CYFROWEJ', 'NOWE HORYZONTY', 'OTWARTE SERCA',
  'ZDROWIE I RODZINA', 'POMOCY ZWIERZĘTOM', 'KULTURY I SZTUKI', 'ZIELONA PRZYSZŁOŚĆ', 'WSPARCIA SENIORÓW',
  'SPORTU I REKREACJI', 'DZIEDZICTWA LOKALNEGO', 'AKTYWNEJ REHABILITACJI', 'MŁODZI ZDOLNI', 'RAZEM MOŻEMY WIĘCEJ',
  'DOBRY START', 'ISKIERKA NADZIEI', 'PROMOCJI ZDROWIA', 'ROZWOJU REGIONU', 'NAUKI I TECHNIKI',
] as const;

export const ASSOCIATION_NAMES = [
  'STOWARZYSZENIE PRZYJACIÓŁ SZKOŁY', 'STOWARZYSZENIE MIŁOŚNIKÓW HISTORII', 'STOWARZYSZENIE ROZWOJU WSI',
  'STOWARZYSZENIE NA RZECZ OSÓB NIEPEŁNOSPRAWNYCH', 'STOWARZYSZENIE KULTURALNE AKCENT', 'STOWARZYSZENIE TURYSTYCZNE WĘDROWIEC',
  'STOWARZYSZENIE EKOLOGICZNE ZIELONY ŚWIAT', 'STOWARZYSZENIE MŁODYCH PRZEDSIĘBIORCÓW', 'STOWARZYSZENIE AKTYWNI SENIORZY',
  'STOWARZYSZENIE LOKALNA GRUPA DZIAŁANIA', 'STOWARZYSZENIE RODZICÓW I PRZYJACIÓŁ DZIECI', 'STOWARZYSZENIE MUZYCZNE CANTABILE',
] as const;

export const SPORTS_CLUB_PREFIXES = ['KLUB SPORTOWY', 'UCZNIOWSKI KLUB SPORTOWY', 'MIEJSKI KLUB SPORTOWY', 'LUDOWY KLUB SPORTOWY'] as const;
export const SPORTS_CLUB_NAMES = ['ORZEŁ', 'SOKÓŁ', 'POLONIA', 'OLIMPIA', 'CZARNI', 'LECHIA', 'GÓRNIK', 'UNIA', 'SPARTA', 'ISKRA', 'START', 'RUCH', 'PIAST', 'WARTA', 'JEDYNKA'] as const;

export const COOPERATIVE_NAMES = [
  'SPÓŁDZIELNIA MIESZKANIOWA ZORZA', 'SPÓŁDZIELNIA MIESZKANIOWA JUTRZENKA', 'SPÓŁDZIELNIA MIESZKANIOWA PRZYSZŁOŚĆ',
  'SPÓŁDZIELNIA MIESZKANIOWA ZACISZE', 'SPÓŁDZIELNIA MIESZKANIOWA NASZ DOM', 'SPÓŁDZIELNIA MIESZKANIOWA METALOWIEC',
  'SPÓŁDZIELNIA MIESZKANIOWA OSIEDLE ZIELONE', 'SPÓŁDZIELNIA MIESZKANIOWA LOKATORSKO-WŁASNOŚCIOWA',
] as const;
export const FARM_COOPERATIVE_NAMES = [
  'ROLNICZA SPÓŁDZIELNIA PRODUKCYJNA ZGODA', 'ROLNICZA SPÓŁDZIELNIA PRODUKCYJNA PRZYSZŁOŚĆ',
  'SPÓŁDZIELNIA KÓŁEK ROLNICZYCH', 'GMINNA SPÓŁDZIELNIA SAMOPOMOC CHŁOPSKA', 'SPÓŁDZIELNIA MLECZARSKA',
] as const;

export const UNIT_KINDS = ['Sklep', 'Oddział', 'Magazyn', 'Punkt Sprzedaży', 'Biuro', 'Zakład Produkcyjny', 'Warsztat', 'Filia', 'Gabinet', 'Salon'] as const;

/** Mobile number prefixes in use in Poland. */
export const MOBILE_PREFIXES = [
  '500', '501', '502', '503', '504', '505', '506', '507', '508', '509', '510', '511', '512', '513', '514', '515',
  '516', '517', '518', '519', '530', '531', '533', '535', '536', '537', '538', '570', '571', '572', '573', '575',
  '600', '601', '602', '603', '604', '605', '606', '607', '608', '609', '660', '661', '662', '663', '664', '665',
  '666', '667', '668', '669', '690', '691', '692', '693', '694', '695', '696', '697', '698', '721', '722', '723',
  '724', '725', '726', '727', '728', '729', '730', '731', '732', '733', '734', '735', '736', '737', '738', '739',
  '780', '781', '782', '783', '784', '785', '786', '787', '788', '789', '790', '791', '792', '793', '794', '795',
  '796', '797', '798', '799', '880', '881', '882', '883', '884', '885', '886', '887', '888', '889',
] as const;

/** Landline area codes by voivodeship (the capital's first). */
export const AREA_CODES: Readonly<Record<string, readonly string[]>> = {
  'dolnośląskie': ['71', '74', '75', '76'],
  'kujawsko-pomorskie': ['52', '54', '56'],
  'lubelskie': ['81', '82', '83', '84'],
  'lubuskie': ['68', '95'],
  'łódzkie': ['42', '43', '44', '46'],
  'małopolskie': ['12', '14', '18'],
  'mazowieckie': ['22', '23', '24', '25', '29', '48'],
  'opolskie': ['77'],
  'podkarpackie': ['17', '13', '15', '16'],
  'podlaskie': ['85', '86', '87'],
  'pomorskie': ['58', '59'],
  'śląskie': ['32', '33', '34'],
  'świętokrzyskie': ['41', '15'],
  'warmińsko-mazurskie': ['89', '55', '87'],
  'wielkopolskie': ['61', '62', '63', '65', '67'],
  'zachodniopomorskie': ['91', '94'],
};

/** Three-digit bank numbers (the start of an NRB's sort code) with a rough market share. */
export const BANKS: ReadonlyArray<readonly [string, number]> = [
  ['102', 20], ['105', 12], ['109', 14], ['114', 14], ['116', 10], ['124', 12], ['160', 6], ['249', 6],
  ['132', 2], ['154', 2], ['203', 2], ['187', 3], ['194', 2],
];

export const EMAIL_PROVIDERS = ['gmail.com', 'wp.pl', 'o2.pl', 'onet.pl', 'interia.pl', 'op.pl', 'poczta.fm'] as const;
export const BUSINESS_MAILBOXES = ['biuro', 'kontakt', 'info', 'office', 'sekretariat'] as const;
