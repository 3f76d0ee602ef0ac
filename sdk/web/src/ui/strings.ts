/**
 * The challenge UI's strings, and the translation keys the server sends in views (docs/challenges.md:
 * `challenge.slide.prompt`, `challenge.select.prompt.shape` with `{shape}`, `challenge.shape.star`...).
 * Each group lists its values in the order of GROUPS, separated by `|`. Every language but English is machine-made
 * in this repository, not reviewed by native speakers (docs/decisions.md, "Accessibility and languages").
 */
const GROUPS = {
  ui: ['verify', 'refresh', 'undo', 'fresh', 'point', 'wrong'],
  slide: ['challenge.slide.prompt', 'challenge.slide.label', 'challenge.slide.keyboardHelp'],
  click: ['challenge.click.prompt', 'challenge.click.label', 'challenge.click.keyboardHelp'],
  select: [
    'challenge.select.prompt.shape',
    'challenge.select.prompt.colour',
    'challenge.select.label',
    'challenge.select.keyboardHelp',
    'challenge.select.tile',
  ],
  shape: ['circle', 'triangle', 'square', 'pentagon', 'star', 'heart', 'arrow', 'cross', 'moon'].map(
    (s) => `challenge.shape.${s}`,
  ),
  colour: ['red', 'blue', 'yellow'].map((c) => `challenge.colour.${c}`),
  /** The accessible alternative (docs/accessibility.md). */
  alt: ['alternative', 'altPrompt', 'altStarting', 'altWorking', 'altProgress', 'altUnavailable', 'altBack'],
} as const;

type Table = Record<keyof typeof GROUPS, string>;

export const STRINGS: Record<string, Table> = {
  en: {
    ui: 'Verify|New challenge|Undo|Here is a new challenge.|Click {n}|That answer was not right. Try again with this new one.',
    slide:
      'Drag the piece into the gap that matches its shape|Puzzle piece|Use the arrow keys to move the piece (Shift for bigger steps), then press Enter.',
    click:
      'Click these {count} symbols in order:|Picture to click on|Move the crosshair with the arrow keys (Shift for bigger steps), press Enter or Space to click, Backspace to undo.',
    select:
      'Select every tile with this shape: {shape}|Select every tile with a symbol of this colour: {colour}|Tiles|Move between tiles with the arrow keys, press Space or Enter to select or clear one, then Verify.|Row {row}, column {column}',
    shape: 'circle|triangle|square|pentagon|star|heart|arrow|cross|moon',
    colour: 'red|blue|yellow',
    alt: "Can't see the puzzle? Continue without it|Verifying without the puzzle|Starting…|This takes about {seconds} seconds. Please wait here; the progress is announced.|{percent} % done|The alternative is not available right now. Solve the puzzle or try again later.|Back to the puzzle",
  },
  fr: {
    ui: "Valider|Nouveau défi|Annuler|Voici un nouveau défi.|Clic {n}|Cette réponse n'était pas la bonne. Réessayez avec celui-ci.",
    slide:
      "Faites glisser la pièce dans l'encoche de même forme|Pièce du puzzle|Déplacez la pièce avec les flèches (Maj pour de grands pas), puis appuyez sur Entrée.",
    click:
      "Cliquez sur ces {count} symboles dans l'ordre :|Image sur laquelle cliquer|Déplacez le viseur avec les flèches (Maj pour de grands pas), Entrée ou Espace pour cliquer, Retour arrière pour annuler.",
    select:
      "Sélectionnez toutes les cases contenant cette forme : {shape}|Sélectionnez toutes les cases contenant un symbole de cette couleur : {colour}|Cases|Passez d'une case à l'autre avec les flèches, Espace ou Entrée pour sélectionner ou désélectionner, puis Valider.|Ligne {row}, colonne {column}",
    shape: 'cercle|triangle|carré|pentagone|étoile|cœur|flèche|croix|lune',
    colour: 'rouge|bleu|jaune',
    alt: "Vous ne voyez pas le puzzle ? Vérifier sans|Vérification sans le puzzle|Démarrage…|Cela prend environ {seconds} secondes. Patientez ici ; la progression est annoncée.|{percent} % effectué|L'alternative n'est pas disponible pour le moment. Résolvez le puzzle ou réessayez plus tard.|Revenir au puzzle",
  },
  de: {
    ui: 'Prüfen|Neue Aufgabe|Rückgängig|Hier ist eine neue Aufgabe.|Klick {n}|Diese Antwort war nicht richtig. Versuchen Sie es mit dieser neuen erneut.',
    slide:
      'Ziehen Sie das Teil in die Lücke mit derselben Form|Puzzleteil|Bewegen Sie das Teil mit den Pfeiltasten (Umschalt für große Schritte) und drücken Sie dann Enter.',
    click:
      'Klicken Sie diese {count} Symbole der Reihe nach an:|Bild zum Anklicken|Bewegen Sie das Fadenkreuz mit den Pfeiltasten (Umschalt für große Schritte), Enter oder Leertaste zum Klicken, Rücktaste zum Rückgängigmachen.',
    select:
      'Wählen Sie alle Felder mit dieser Form: {shape}|Wählen Sie alle Felder mit einem Symbol in dieser Farbe: {colour}|Felder|Mit den Pfeiltasten zwischen den Feldern wechseln, mit Leertaste oder Enter aus- oder abwählen, dann Prüfen.|Zeile {row}, Spalte {column}',
    shape: 'Kreis|Dreieck|Quadrat|Fünfeck|Stern|Herz|Pfeil|Kreuz|Mond',
    colour: 'Rot|Blau|Gelb',
    alt: 'Sie können das Rätsel nicht sehen? Ohne prüfen|Prüfung ohne das Rätsel|Wird gestartet…|Das dauert etwa {seconds} Sekunden. Bitte warten Sie hier; der Fortschritt wird angesagt.|{percent} % erledigt|Die Alternative ist gerade nicht verfügbar. Lösen Sie das Rätsel oder versuchen Sie es später erneut.|Zurück zum Rätsel',
  },
  es: {
    ui: 'Verificar|Nuevo desafío|Deshacer|Aquí tienes un nuevo desafío.|Clic {n}|Esa respuesta no era correcta. Inténtalo de nuevo con este.',
    slide:
      'Arrastra la pieza hasta el hueco de su misma forma|Pieza del puzle|Mueve la pieza con las flechas (Mayús para pasos grandes) y pulsa Intro.',
    click:
      'Haz clic en estos {count} símbolos en orden:|Imagen en la que hacer clic|Mueve el punto de mira con las flechas (Mayús para pasos grandes), Intro o Espacio para hacer clic, Retroceso para deshacer.',
    select:
      'Selecciona todas las casillas con esta forma: {shape}|Selecciona todas las casillas con un símbolo de este color: {colour}|Casillas|Muévete entre las casillas con las flechas, pulsa Espacio o Intro para marcar o desmarcar y luego Verificar.|Fila {row}, columna {column}',
    shape: 'círculo|triángulo|cuadrado|pentágono|estrella|corazón|flecha|cruz|luna',
    colour: 'rojo|azul|amarillo',
    alt: '¿No puedes ver el puzle? Verificar sin él|Verificación sin el puzle|Iniciando…|Tarda unos {seconds} segundos. Espera aquí; se anunciará el progreso.|{percent} % completado|La alternativa no está disponible ahora. Resuelve el puzle o inténtalo más tarde.|Volver al puzle',
  },
  pt: {
    ui: 'Verificar|Novo desafio|Desfazer|Aqui está um novo desafio.|Clique {n}|Essa resposta não estava certa. Tente de novo com este.',
    slide:
      'Arraste a peça até o encaixe de mesmo formato|Peça do quebra-cabeça|Mova a peça com as setas (Shift para passos maiores) e pressione Enter.',
    click:
      'Clique nestes {count} símbolos, na ordem:|Imagem para clicar|Mova a mira com as setas (Shift para passos maiores), Enter ou Espaço para clicar, Backspace para desfazer.',
    select:
      'Selecione todos os quadros com esta forma: {shape}|Selecione todos os quadros com um símbolo desta cor: {colour}|Quadros|Mova-se entre os quadros com as setas, Espaço ou Enter para marcar ou desmarcar e depois Verificar.|Linha {row}, coluna {column}',
    shape: 'círculo|triângulo|quadrado|pentágono|estrela|coração|seta|cruz|lua',
    colour: 'vermelho|azul|amarelo',
    alt: 'Não consegue ver o quebra-cabeça? Verificar sem ele|Verificação sem o quebra-cabeça|A iniciar…|Demora cerca de {seconds} segundos. Aguarde aqui; o progresso é anunciado.|{percent} % concluído|A alternativa não está disponível agora. Resolva o quebra-cabeça ou tente mais tarde.|Voltar ao quebra-cabeça',
  },
  it: {
    ui: 'Verifica|Nuova sfida|Annulla|Ecco una nuova sfida.|Clic {n}|La risposta non era corretta. Riprova con questa.',
    slide:
      'Trascina il pezzo nello spazio vuoto della stessa forma|Pezzo del puzzle|Sposta il pezzo con le frecce (Maiusc per passi più grandi), poi premi Invio.',
    click:
      "Fai clic su questi {count} simboli nell'ordine:|Immagine su cui fare clic|Sposta il mirino con le frecce (Maiusc per passi più grandi), Invio o Spazio per fare clic, Backspace per annullare.",
    select:
      'Seleziona tutte le caselle con questa forma: {shape}|Seleziona tutte le caselle con un simbolo di questo colore: {colour}|Caselle|Spostati tra le caselle con le frecce, Spazio o Invio per selezionare o deselezionare, poi Verifica.|Riga {row}, colonna {column}',
    shape: 'cerchio|triangolo|quadrato|pentagono|stella|cuore|freccia|croce|luna',
    colour: 'rosso|blu|giallo',
    alt: "Non riesci a vedere il puzzle? Verifica senza|Verifica senza il puzzle|Avvio…|Ci vogliono circa {seconds} secondi. Attendi qui; l'avanzamento viene annunciato.|{percent} % completato|L'alternativa non è disponibile ora. Risolvi il puzzle o riprova più tardi.|Torna al puzzle",
  },
  ja: {
    ui: '確認|新しいチャレンジ|元に戻す|新しいチャレンジです。|クリック {n}|答えが正しくありませんでした。この新しいチャレンジでもう一度どうぞ。',
    slide:
      'ピースを同じ形の穴までドラッグしてください|パズルのピース|矢印キーでピースを動かし（Shiftで大きく移動）、Enterキーを押してください。',
    click:
      '次の{count}個の記号を順番にクリックしてください：|クリックする画像|矢印キーで照準を動かし（Shiftで大きく移動）、EnterキーまたはSpaceキーでクリック、Backspaceキーで取り消します。',
    select:
      'この形を含むタイルをすべて選択してください：{shape}|この色の記号を含むタイルをすべて選択してください：{colour}|タイル|矢印キーでタイル間を移動し、SpaceキーまたはEnterキーで選択を切り替え、最後に「確認」を押してください。|{row}行{column}列',
    shape: '円|三角形|四角形|五角形|星|ハート|矢印|十字|月',
    colour: '赤|青|黄色',
    alt: 'パズルが見えませんか？パズルなしで確認|パズルなしで確認しています|開始しています…|約 {seconds} 秒かかります。このままお待ちください。進行状況は読み上げられます。|{percent} % 完了|現在この方法は利用できません。パズルを解くか、後でもう一度お試しください。|パズルに戻る',
  },
  zh: {
    ui: '验证|换一个|撤销|已换一个新的验证。|点击 {n}|答案不正确。请用这个新的再试一次。',
    slide:
      '将拼图块拖到形状相同的缺口处|拼图块|使用方向键移动拼图块（按住 Shift 可大步移动），然后按 Enter 键。',
    click:
      '请按顺序点击这 {count} 个符号：|可点击的图片|使用方向键移动准星（按住 Shift 可大步移动），按 Enter 或空格键点击，按退格键撤销。',
    select:
      '请选择所有包含此形状的图块：{shape}|请选择所有包含此颜色符号的图块：{colour}|图块|使用方向键在图块间移动，按空格或 Enter 键选择或取消，然后点击“验证”。|第 {row} 行，第 {column} 列',
    shape: '圆形|三角形|正方形|五边形|星形|心形|箭头|十字|月亮',
    colour: '红色|蓝色|黄色',
    alt: '看不到拼图？不用拼图验证|不用拼图进行验证|正在开始…|大约需要 {seconds} 秒。请在此等待，进度会被播报。|已完成 {percent} %|此替代方式暂时不可用。请完成拼图或稍后再试。|返回拼图',
  },
  ko: {
    ui: '확인|새 문제|실행 취소|새 문제입니다.|클릭 {n}|정답이 아닙니다. 이 새 문제로 다시 해 보세요.',
    slide:
      '조각을 같은 모양의 빈칸으로 드래그하세요|퍼즐 조각|화살표 키로 조각을 움직이고(Shift를 누르면 크게 이동) Enter 키를 누르세요.',
    click:
      '다음 {count}개의 기호를 순서대로 클릭하세요:|클릭할 이미지|화살표 키로 조준점을 움직이고(Shift를 누르면 크게 이동) Enter 또는 Space 키로 클릭, Backspace 키로 취소하세요.',
    select:
      '이 모양이 있는 타일을 모두 선택하세요: {shape}|이 색의 기호가 있는 타일을 모두 선택하세요: {colour}|타일|화살표 키로 타일 사이를 이동하고 Space 또는 Enter 키로 선택하거나 해제한 다음 확인을 누르세요.|{row}행 {column}열',
    shape: '원|삼각형|사각형|오각형|별|하트|화살표|십자|달',
    colour: '빨간색|파란색|노란색',
    alt: '퍼즐이 보이지 않나요? 퍼즐 없이 확인|퍼즐 없이 확인 중|시작하는 중…|약 {seconds}초 걸립니다. 여기에서 기다려 주세요. 진행 상황을 알려 드립니다.|{percent}% 완료|지금은 대체 방법을 사용할 수 없습니다. 퍼즐을 풀거나 나중에 다시 시도하세요.|퍼즐로 돌아가기',
  },
  ru: {
    ui: 'Проверить|Новое задание|Отменить|Вот новое задание.|Нажатие {n}|Ответ неверный. Попробуйте ещё раз с этим заданием.',
    slide:
      'Перетащите фрагмент в вырез такой же формы|Фрагмент пазла|Двигайте фрагмент стрелками (с Shift — большими шагами), затем нажмите Enter.',
    click:
      'Нажмите на эти символы ({count}) по порядку:|Изображение для нажатия|Двигайте прицел стрелками (с Shift — большими шагами), Enter или пробел — нажать, Backspace — отменить.',
    select:
      'Выберите все клетки с этой фигурой: {shape}|Выберите все клетки с символом этого цвета: {colour}|Клетки|Переходите между клетками стрелками, пробел или Enter — выбрать или снять выбор, затем «Проверить».|Строка {row}, столбец {column}',
    shape: 'круг|треугольник|квадрат|пятиугольник|звезда|сердце|стрелка|крест|луна',
    colour: 'красный|синий|жёлтый',
    alt: 'Не видите головоломку? Проверка без неё|Проверка без головоломки|Запуск…|Это займёт около {seconds} с. Подождите здесь; о ходе проверки будет сообщено.|Готово {percent} %|Альтернатива сейчас недоступна. Решите головоломку или повторите попытку позже.|Вернуться к головоломке',
  },
  nl: {
    ui: 'Controleren|Nieuwe uitdaging|Ongedaan maken|Hier is een nieuwe uitdaging.|Klik {n}|Dat antwoord was niet goed. Probeer het opnieuw met deze.',
    slide:
      'Sleep het stukje naar de opening met dezelfde vorm|Puzzelstukje|Verplaats het stukje met de pijltjestoetsen (Shift voor grotere stappen) en druk op Enter.',
    click:
      'Klik op deze {count} symbolen, in deze volgorde:|Afbeelding om op te klikken|Verplaats het vizier met de pijltjestoetsen (Shift voor grotere stappen), Enter of spatie om te klikken, Backspace om ongedaan te maken.',
    select:
      'Selecteer alle vakjes met deze vorm: {shape}|Selecteer alle vakjes met een symbool in deze kleur: {colour}|Vakjes|Ga met de pijltjestoetsen naar een vakje, druk op spatie of Enter om het te selecteren of te wissen en kies dan Controleren.|Rij {row}, kolom {column}',
    shape: 'cirkel|driehoek|vierkant|vijfhoek|ster|hart|pijl|kruis|maan',
    colour: 'rood|blauw|geel',
    alt: 'Kunt u de puzzel niet zien? Verifiëren zonder puzzel|Verificatie zonder de puzzel|Bezig met starten…|Dit duurt ongeveer {seconds} seconden. Wacht hier; de voortgang wordt voorgelezen.|{percent} % klaar|Het alternatief is nu niet beschikbaar. Los de puzzel op of probeer het later opnieuw.|Terug naar de puzzel',
  },
  pl: {
    ui: 'Sprawdź|Nowe zadanie|Cofnij|Oto nowe zadanie.|Kliknięcie {n}|Ta odpowiedź była błędna. Spróbuj ponownie z tym zadaniem.',
    slide:
      'Przeciągnij element do wycięcia o tym samym kształcie|Element układanki|Przesuwaj element strzałkami (z Shift o większe kroki), a potem naciśnij Enter.',
    click:
      'Kliknij te symbole ({count}) w tej kolejności:|Obraz do klikania|Przesuwaj celownik strzałkami (z Shift o większe kroki), Enter lub spacja — kliknięcie, Backspace — cofnięcie.',
    select:
      'Zaznacz wszystkie pola z tym kształtem: {shape}|Zaznacz wszystkie pola z symbolem w tym kolorze: {colour}|Pola|Poruszaj się między polami strzałkami, spacją lub Enterem zaznaczaj i odznaczaj, a potem wybierz Sprawdź.|Wiersz {row}, kolumna {column}',
    shape: 'koło|trójkąt|kwadrat|pięciokąt|gwiazda|serce|strzałka|krzyż|księżyc',
    colour: 'czerwony|niebieski|żółty',
    alt: 'Nie widzisz układanki? Weryfikuj bez niej|Weryfikacja bez układanki|Uruchamianie…|To potrwa około {seconds} s. Zaczekaj tutaj; postęp jest ogłaszany.|Ukończono {percent} %|Alternatywa jest teraz niedostępna. Rozwiąż układankę lub spróbuj później.|Wróć do układanki',
  },
  ar: {
    ui: 'تحقّق|اختبار جديد|تراجع|إليك اختبارًا جديدًا.|النقرة {n}|لم تكن الإجابة صحيحة. حاول مرة أخرى مع هذا الاختبار.',
    slide:
      'اسحب القطعة إلى الفجوة التي تطابق شكلها|قطعة اللغز|استخدم مفاتيح الأسهم لتحريك القطعة (Shift لخطوات أكبر)، ثم اضغط Enter.',
    click:
      'انقر على هذه الرموز ({count}) بالترتيب:|صورة للنقر عليها|حرّك علامة التصويب بمفاتيح الأسهم (Shift لخطوات أكبر)، واضغط Enter أو المسافة للنقر، وBackspace للتراجع.',
    select:
      'اختر كل مربع فيه هذا الشكل: {shape}|اختر كل مربع فيه رمز بهذا اللون: {colour}|المربعات|تنقّل بين المربعات بمفاتيح الأسهم، واضغط المسافة أو Enter لتحديد مربع أو إلغاء تحديده، ثم تحقّق.|الصف {row}، العمود {column}',
    shape: 'دائرة|مثلث|مربع|مخمس|نجمة|قلب|سهم|صليب|هلال',
    colour: 'أحمر|أزرق|أصفر',
    alt: 'لا ترى اللغز؟ تحقّق من دونه|التحقق من دون اللغز|جارٍ البدء…|يستغرق هذا نحو {seconds} ثانية. يُرجى الانتظار هنا؛ سيُعلَن التقدّم.|اكتمل {percent} %|البديل غير متاح الآن. حُلّ اللغز أو حاول لاحقًا.|العودة إلى اللغز',
  },
  he: {
    ui: 'אימות|אתגר חדש|ביטול|הנה אתגר חדש.|לחיצה {n}|התשובה לא הייתה נכונה. נסו שוב עם האתגר החדש.',
    slide:
      'גררו את החלק אל החריץ בעל אותה צורה|חלק הפאזל|הזיזו את החלק בעזרת מקשי החיצים (Shift לצעדים גדולים), ואז הקישו Enter.',
    click:
      'לחצו על {count} הסמלים האלה לפי הסדר:|תמונה ללחיצה|הזיזו את הכוונת בעזרת מקשי החיצים (Shift לצעדים גדולים), Enter או רווח ללחיצה, Backspace לביטול.',
    select:
      'בחרו כל משבצת עם הצורה הזו: {shape}|בחרו כל משבצת עם סמל בצבע הזה: {colour}|משבצות|עברו בין המשבצות בעזרת מקשי החיצים, הקישו רווח או Enter כדי לבחור או לבטל, ואז אימות.|שורה {row}, עמודה {column}',
    shape: 'עיגול|משולש|ריבוע|מחומש|כוכב|לב|חץ|צלב|ירח',
    colour: 'אדום|כחול|צהוב',
    alt: 'לא רואים את הפאזל? אימות בלעדיו|אימות ללא הפאזל|מתחיל…|זה לוקח כ־{seconds} שניות. נא להמתין כאן; ההתקדמות מוכרזת.|{percent}% הושלמו|החלופה אינה זמינה כעת. פתרו את הפאזל או נסו שוב מאוחר יותר.|חזרה לפאזל',
  },
  tr: {
    ui: 'Doğrula|Yeni görev|Geri al|İşte yeni bir görev.|Tıklama {n}|Bu yanıt doğru değildi. Bu yeni görevle yeniden deneyin.',
    slide:
      "Parçayı aynı şekildeki boşluğa sürükleyin|Yapboz parçası|Parçayı ok tuşlarıyla taşıyın (büyük adımlar için Shift), sonra Enter'a basın.",
    click:
      'Bu {count} sembole sırayla tıklayın:|Tıklanacak resim|Nişangahı ok tuşlarıyla taşıyın (büyük adımlar için Shift), tıklamak için Enter veya Boşluk, geri almak için Geri tuşu.',
    select:
      'Bu şekli içeren tüm kareleri seçin: {shape}|Bu renkte sembol içeren tüm kareleri seçin: {colour}|Kareler|Kareler arasında ok tuşlarıyla gezinin, seçmek veya kaldırmak için Boşluk ya da Enter, sonra Doğrula.|Satır {row}, sütun {column}',
    shape: 'daire|üçgen|kare|beşgen|yıldız|kalp|ok|artı|hilal',
    colour: 'kırmızı|mavi|sarı',
    alt: 'Bulmacayı göremiyor musunuz? Bulmacasız doğrulayın|Bulmaca olmadan doğrulanıyor|Başlatılıyor…|Bu yaklaşık {seconds} saniye sürer. Lütfen burada bekleyin; ilerleme duyurulur.|%{percent} tamamlandı|Alternatif şu anda kullanılamıyor. Bulmacayı çözün veya daha sonra tekrar deneyin.|Bulmacaya dön',
  },
  sv: {
    ui: 'Verifiera|Ny uppgift|Ångra|Här är en ny uppgift.|Klick {n}|Svaret var inte rätt. Försök igen med den här.',
    slide:
      'Dra biten till hålet med samma form|Pusselbit|Flytta biten med piltangenterna (Skift för större steg) och tryck sedan på Enter.',
    click:
      'Klicka på dessa {count} symboler i ordning:|Bild att klicka på|Flytta siktet med piltangenterna (Skift för större steg), Enter eller blanksteg för att klicka, Backsteg för att ångra.',
    select:
      'Markera alla rutor med den här formen: {shape}|Markera alla rutor med en symbol i den här färgen: {colour}|Rutor|Gå mellan rutorna med piltangenterna, tryck på blanksteg eller Enter för att markera eller avmarkera, välj sedan Verifiera.|Rad {row}, kolumn {column}',
    shape: 'cirkel|triangel|kvadrat|femhörning|stjärna|hjärta|pil|kors|måne',
    colour: 'röd|blå|gul',
    alt: 'Ser du inte pusslet? Verifiera utan det|Verifierar utan pusslet|Startar…|Det tar ungefär {seconds} sekunder. Vänta här; förloppet läses upp.|{percent} % klart|Alternativet är inte tillgängligt just nu. Lös pusslet eller försök igen senare.|Tillbaka till pusslet',
  },
  da: {
    ui: 'Verificer|Ny opgave|Fortryd|Her er en ny opgave.|Klik {n}|Svaret var ikke rigtigt. Prøv igen med denne.',
    slide:
      'Træk brikken hen i hullet med samme form|Puslespilsbrik|Flyt brikken med piletasterne (Skift for større trin), og tryk derefter på Enter.',
    click:
      'Klik på disse {count} symboler i rækkefølge:|Billede at klikke på|Flyt sigtet med piletasterne (Skift for større trin), Enter eller mellemrum for at klikke, Backspace for at fortryde.',
    select:
      'Vælg alle felter med denne form: {shape}|Vælg alle felter med et symbol i denne farve: {colour}|Felter|Gå mellem felterne med piletasterne, tryk på mellemrum eller Enter for at vælge eller fravælge, og vælg så Verificer.|Række {row}, kolonne {column}',
    shape: 'cirkel|trekant|firkant|femkant|stjerne|hjerte|pil|kryds|måne',
    colour: 'rød|blå|gul',
    alt: 'Kan du ikke se puslespillet? Bekræft uden|Bekræfter uden puslespillet|Starter…|Det tager cirka {seconds} sekunder. Vent her; fremskridtet bliver læst op.|{percent} % færdig|Alternativet er ikke tilgængeligt lige nu. Løs puslespillet, eller prøv igen senere.|Tilbage til puslespillet',
  },
  nb: {
    ui: 'Verifiser|Ny oppgave|Angre|Her er en ny oppgave.|Klikk {n}|Svaret var ikke riktig. Prøv igjen med denne.',
    slide:
      'Dra brikken til hullet med samme form|Puslespillbrikke|Flytt brikken med piltastene (Shift for større steg), og trykk deretter Enter.',
    click:
      'Klikk på disse {count} symbolene i rekkefølge:|Bilde å klikke på|Flytt siktet med piltastene (Shift for større steg), Enter eller mellomrom for å klikke, Backspace for å angre.',
    select:
      'Velg alle rutene med denne formen: {shape}|Velg alle rutene med et symbol i denne fargen: {colour}|Ruter|Gå mellom rutene med piltastene, trykk mellomrom eller Enter for å velge eller fjerne valget, og velg så Verifiser.|Rad {row}, kolonne {column}',
    shape: 'sirkel|trekant|kvadrat|femkant|stjerne|hjerte|pil|kors|måne',
    colour: 'rød|blå|gul',
    alt: 'Ser du ikke puslespillet? Verifiser uten|Verifiserer uten puslespillet|Starter…|Dette tar omtrent {seconds} sekunder. Vent her; fremdriften blir lest opp.|{percent} % ferdig|Alternativet er ikke tilgjengelig akkurat nå. Løs puslespillet eller prøv igjen senere.|Tilbake til puslespillet',
  },
  fi: {
    ui: 'Vahvista|Uusi tehtävä|Kumoa|Tässä uusi tehtävä.|Napsautus {n}|Vastaus ei ollut oikein. Yritä uudelleen tällä tehtävällä.',
    slide:
      'Vedä pala samanmuotoiseen koloon|Palapelin pala|Siirrä palaa nuolinäppäimillä (Shift isompiin askeliin) ja paina sitten Enter.',
    click:
      'Napsauta näitä {count} symbolia järjestyksessä:|Napsautettava kuva|Siirrä tähtäintä nuolinäppäimillä (Shift isompiin askeliin), Enter tai välilyönti napsauttaa, askelpalautin kumoaa.',
    select:
      'Valitse kaikki ruudut, joissa on tämä muoto: {shape}|Valitse kaikki ruudut, joissa on tämänvärinen symboli: {colour}|Ruudut|Liiku ruutujen välillä nuolinäppäimillä, valitse tai poista valinta välilyönnillä tai Enterillä ja valitse lopuksi Vahvista.|Rivi {row}, sarake {column}',
    shape: 'ympyrä|kolmio|neliö|viisikulmio|tähti|sydän|nuoli|risti|kuu',
    colour: 'punainen|sininen|keltainen',
    alt: 'Etkö näe palapeliä? Vahvista ilman sitä|Vahvistetaan ilman palapeliä|Käynnistetään…|Tämä kestää noin {seconds} sekuntia. Odota tässä; edistyminen ilmoitetaan.|{percent} % valmis|Vaihtoehto ei ole nyt käytettävissä. Ratkaise palapeli tai yritä myöhemmin uudelleen.|Takaisin palapeliin',
  },
  cs: {
    ui: 'Ověřit|Nová úloha|Zpět|Tady je nová úloha.|Kliknutí {n}|Odpověď nebyla správná. Zkuste to znovu s touto úlohou.',
    slide:
      'Přetáhněte dílek do otvoru stejného tvaru|Dílek skládačky|Posouvejte dílek šipkami (Shift pro větší kroky) a pak stiskněte Enter.',
    click:
      'Klikněte na tyto symboly ({count}) v tomto pořadí:|Obrázek ke klikání|Posouvejte zaměřovač šipkami (Shift pro větší kroky), Enter nebo mezerník klikne, Backspace vrátí zpět.',
    select:
      'Vyberte všechna pole s tímto tvarem: {shape}|Vyberte všechna pole se symbolem této barvy: {colour}|Pole|Mezi poli se pohybujte šipkami, mezerníkem nebo Enterem pole vyberte či zrušte, pak zvolte Ověřit.|Řádek {row}, sloupec {column}',
    shape: 'kruh|trojúhelník|čtverec|pětiúhelník|hvězda|srdce|šipka|kříž|měsíc',
    colour: 'červená|modrá|žlutá',
    alt: 'Nevidíte skládačku? Ověřit bez ní|Ověřování bez skládačky|Spouštění…|Potrvá to asi {seconds} s. Počkejte prosím zde; průběh bude oznamován.|Hotovo {percent} %|Alternativa teď není k dispozici. Vyřešte skládačku nebo to zkuste později.|Zpět ke skládačce',
  },
  uk: {
    ui: 'Перевірити|Нове завдання|Скасувати|Ось нове завдання.|Натискання {n}|Відповідь неправильна. Спробуйте ще раз із цим завданням.',
    slide:
      'Перетягніть фрагмент у виріз такої самої форми|Фрагмент пазла|Рухайте фрагмент стрілками (із Shift — більшими кроками), потім натисніть Enter.',
    click:
      'Натисніть на ці символи ({count}) по черзі:|Зображення для натискання|Рухайте приціл стрілками (із Shift — більшими кроками), Enter або пробіл — натиснути, Backspace — скасувати.',
    select:
      'Виберіть усі клітинки з цією фігурою: {shape}|Виберіть усі клітинки із символом цього кольору: {colour}|Клітинки|Переходьте між клітинками стрілками, пробіл або Enter — вибрати чи зняти вибір, потім «Перевірити».|Рядок {row}, стовпець {column}',
    shape: "коло|трикутник|квадрат|п'ятикутник|зірка|серце|стрілка|хрест|місяць",
    colour: 'червоний|синій|жовтий',
    alt: 'Не бачите головоломку? Перевірка без неї|Перевірка без головоломки|Запуск…|Це триває близько {seconds} с. Зачекайте тут; про поступ буде повідомлено.|Виконано {percent} %|Альтернатива зараз недоступна. Розв’яжіть головоломку або спробуйте пізніше.|Повернутися до головоломки',
  },
  el: {
    ui: 'Επαλήθευση|Νέα δοκιμασία|Αναίρεση|Ορίστε μια νέα δοκιμασία.|Κλικ {n}|Η απάντηση δεν ήταν σωστή. Δοκιμάστε ξανά με αυτή.',
    slide:
      'Σύρετε το κομμάτι στο κενό με το ίδιο σχήμα|Κομμάτι παζλ|Μετακινήστε το κομμάτι με τα βέλη (Shift για μεγαλύτερα βήματα) και πατήστε Enter.',
    click:
      'Κάντε κλικ σε αυτά τα {count} σύμβολα με τη σειρά:|Εικόνα για κλικ|Μετακινήστε το στόχαστρο με τα βέλη (Shift για μεγαλύτερα βήματα), Enter ή διάστημα για κλικ, Backspace για αναίρεση.',
    select:
      'Επιλέξτε όλα τα τετράγωνα με αυτό το σχήμα: {shape}|Επιλέξτε όλα τα τετράγωνα με σύμβολο αυτού του χρώματος: {colour}|Τετράγωνα|Μετακινηθείτε ανάμεσα στα τετράγωνα με τα βέλη, πατήστε διάστημα ή Enter για επιλογή ή αποεπιλογή και μετά Επαλήθευση.|Γραμμή {row}, στήλη {column}',
    shape: 'κύκλος|τρίγωνο|τετράγωνο|πεντάγωνο|αστέρι|καρδιά|βέλος|σταυρός|φεγγάρι',
    colour: 'κόκκινο|μπλε|κίτρινο',
    alt: 'Δεν βλέπετε το παζλ; Επαλήθευση χωρίς αυτό|Επαλήθευση χωρίς το παζλ|Έναρξη…|Χρειάζεται περίπου {seconds} δευτερόλεπτα. Περιμένετε εδώ· η πρόοδος ανακοινώνεται.|Ολοκληρώθηκε {percent} %|Η εναλλακτική δεν είναι διαθέσιμη τώρα. Λύστε το παζλ ή δοκιμάστε αργότερα.|Επιστροφή στο παζλ',
  },
  hu: {
    ui: 'Ellenőrzés|Új feladat|Visszavonás|Itt egy új feladat.|Kattintás {n}|A válasz nem volt helyes. Próbálja újra ezzel a feladattal.',
    slide:
      'Húzza a darabot az azonos alakú résbe|Kirakós darab|Mozgassa a darabot a nyílbillentyűkkel (Shift a nagyobb lépésekhez), majd nyomja meg az Entert.',
    click:
      'Kattintson erre a(z) {count} szimbólumra sorrendben:|Kattintható kép|Mozgassa a célkeresztet a nyílbillentyűkkel (Shift a nagyobb lépésekhez), Enter vagy szóköz a kattintáshoz, Backspace a visszavonáshoz.',
    select:
      'Jelölje ki az összes mezőt ezzel az alakzattal: {shape}|Jelölje ki az összes mezőt ilyen színű szimbólummal: {colour}|Mezők|A nyílbillentyűkkel lépkedjen a mezők között, szóközzel vagy Enterrel jelölje ki vagy törölje, majd Ellenőrzés.|{row}. sor, {column}. oszlop',
    shape: 'kör|háromszög|négyzet|ötszög|csillag|szív|nyíl|kereszt|hold',
    colour: 'piros|kék|sárga',
    alt: 'Nem látja a kirakóst? Ellenőrzés nélküle|Ellenőrzés a kirakós nélkül|Indítás…|Ez körülbelül {seconds} másodpercig tart. Várjon itt; az előrehaladást bemondjuk.|{percent} % kész|Az alternatíva most nem érhető el. Oldja meg a kirakóst, vagy próbálja újra később.|Vissza a kirakóshoz',
  },
  ro: {
    ui: 'Verifică|Provocare nouă|Anulează|Iată o provocare nouă.|Clic {n}|Răspunsul nu a fost corect. Încercați din nou cu aceasta.',
    slide:
      'Trageți piesa în golul cu aceeași formă|Piesă de puzzle|Mutați piesa cu săgețile (Shift pentru pași mai mari), apoi apăsați Enter.',
    click:
      'Faceți clic pe aceste {count} simboluri, în ordine:|Imagine pe care faceți clic|Mutați ținta cu săgețile (Shift pentru pași mai mari), Enter sau Spațiu pentru clic, Backspace pentru anulare.',
    select:
      'Selectați toate pătratele cu această formă: {shape}|Selectați toate pătratele cu un simbol de această culoare: {colour}|Pătrate|Treceți de la un pătrat la altul cu săgețile, apăsați Spațiu sau Enter pentru a selecta sau deselecta, apoi Verifică.|Rândul {row}, coloana {column}',
    shape: 'cerc|triunghi|pătrat|pentagon|stea|inimă|săgeată|cruce|lună',
    colour: 'roșu|albastru|galben',
    alt: 'Nu vedeți puzzle-ul? Verificați fără el|Verificare fără puzzle|Se pornește…|Durează aproximativ {seconds} secunde. Așteptați aici; progresul este anunțat.|{percent} % gata|Alternativa nu este disponibilă acum. Rezolvați puzzle-ul sau încercați mai târziu.|Înapoi la puzzle',
  },
  id: {
    ui: 'Verifikasi|Tantangan baru|Urungkan|Ini tantangan baru.|Klik {n}|Jawaban itu belum benar. Coba lagi dengan yang baru ini.',
    slide:
      'Seret kepingan ke celah yang bentuknya sama|Kepingan puzzle|Gerakkan kepingan dengan tombol panah (Shift untuk langkah besar), lalu tekan Enter.',
    click:
      'Klik {count} simbol ini secara berurutan:|Gambar untuk diklik|Gerakkan bidikan dengan tombol panah (Shift untuk langkah besar), Enter atau Spasi untuk mengeklik, Backspace untuk mengurungkan.',
    select:
      'Pilih semua kotak dengan bentuk ini: {shape}|Pilih semua kotak dengan simbol berwarna ini: {colour}|Kotak|Berpindahlah antarkotak dengan tombol panah, tekan Spasi atau Enter untuk memilih atau membatalkan, lalu Verifikasi.|Baris {row}, kolom {column}',
    shape: 'lingkaran|segitiga|persegi|segi lima|bintang|hati|panah|silang|bulan',
    colour: 'merah|biru|kuning',
    alt: 'Tidak dapat melihat teka-tekinya? Verifikasi tanpanya|Memverifikasi tanpa teka-teki|Memulai…|Ini memerlukan sekitar {seconds} detik. Harap tunggu di sini; kemajuan akan diumumkan.|{percent} % selesai|Alternatif tidak tersedia saat ini. Selesaikan teka-teki atau coba lagi nanti.|Kembali ke teka-teki',
  },
  vi: {
    ui: 'Xác minh|Thử thách mới|Hoàn tác|Đây là thử thách mới.|Nhấp {n}|Câu trả lời chưa đúng. Hãy thử lại với thử thách mới này.',
    slide:
      'Kéo mảnh ghép vào chỗ trống có cùng hình dạng|Mảnh ghép|Di chuyển mảnh ghép bằng phím mũi tên (Shift để bước lớn hơn), rồi nhấn Enter.',
    click:
      'Nhấp vào {count} ký hiệu này theo thứ tự:|Hình để nhấp|Di chuyển tâm ngắm bằng phím mũi tên (Shift để bước lớn hơn), Enter hoặc Space để nhấp, Backspace để hoàn tác.',
    select:
      'Chọn mọi ô có hình này: {shape}|Chọn mọi ô có ký hiệu màu này: {colour}|Các ô|Di chuyển giữa các ô bằng phím mũi tên, nhấn Space hoặc Enter để chọn hoặc bỏ chọn, rồi Xác minh.|Hàng {row}, cột {column}',
    shape: 'hình tròn|tam giác|hình vuông|ngũ giác|ngôi sao|trái tim|mũi tên|chữ thập|mặt trăng',
    colour: 'đỏ|xanh dương|vàng',
    alt: 'Không nhìn thấy câu đố? Xác minh không cần câu đố|Đang xác minh không cần câu đố|Đang bắt đầu…|Việc này mất khoảng {seconds} giây. Vui lòng chờ tại đây; tiến độ sẽ được thông báo.|Đã xong {percent} %|Cách thay thế hiện không khả dụng. Hãy giải câu đố hoặc thử lại sau.|Quay lại câu đố',
  },
  th: {
    ui: 'ยืนยัน|แบบทดสอบใหม่|เลิกทำ|นี่คือแบบทดสอบใหม่|คลิก {n}|คำตอบยังไม่ถูกต้อง ลองอีกครั้งกับแบบทดสอบใหม่นี้',
    slide: 'ลากชิ้นส่วนไปยังช่องที่มีรูปทรงเดียวกัน|ชิ้นส่วนจิ๊กซอว์|ใช้ปุ่มลูกศรเลื่อนชิ้นส่วน (Shift เพื่อเลื่อนทีละมาก) แล้วกด Enter',
    click:
      'คลิกสัญลักษณ์ {count} ตัวนี้ตามลำดับ:|ภาพสำหรับคลิก|ใช้ปุ่มลูกศรเลื่อนเป้า (Shift เพื่อเลื่อนทีละมาก) กด Enter หรือ Space เพื่อคลิก และ Backspace เพื่อเลิกทำ',
    select:
      'เลือกทุกช่องที่มีรูปทรงนี้: {shape}|เลือกทุกช่องที่มีสัญลักษณ์สีนี้: {colour}|ช่อง|ใช้ปุ่มลูกศรเลื่อนระหว่างช่อง กด Space หรือ Enter เพื่อเลือกหรือยกเลิก แล้วกดยืนยัน|แถว {row} คอลัมน์ {column}',
    shape: 'วงกลม|สามเหลี่ยม|สี่เหลี่ยม|ห้าเหลี่ยม|ดาว|หัวใจ|ลูกศร|กากบาท|พระจันทร์',
    colour: 'แดง|น้ำเงิน|เหลือง',
    alt: 'มองไม่เห็นปริศนาใช่ไหม ยืนยันโดยไม่ใช้ปริศนา|กำลังยืนยันโดยไม่ใช้ปริศนา|กำลังเริ่ม…|ใช้เวลาประมาณ {seconds} วินาที โปรดรอที่นี่ ระบบจะแจ้งความคืบหน้า|เสร็จแล้ว {percent} %|ทางเลือกนี้ไม่พร้อมใช้งานในขณะนี้ โปรดแก้ปริศนาหรือลองอีกครั้งภายหลัง|กลับไปที่ปริศนา',
  },
  hi: {
    ui: 'सत्यापित करें|नई चुनौती|पूर्ववत करें|यह रही नई चुनौती।|क्लिक {n}|वह उत्तर सही नहीं था। इस नई चुनौती के साथ फिर से कोशिश करें।',
    slide:
      'टुकड़े को उसी आकार वाले खाँचे में खींचें|पहेली का टुकड़ा|तीर कुंजियों से टुकड़ा खिसकाएँ (बड़े कदमों के लिए Shift), फिर Enter दबाएँ।',
    click:
      'इन {count} चिह्नों पर क्रम से क्लिक करें:|क्लिक करने के लिए चित्र|तीर कुंजियों से निशाना खिसकाएँ (बड़े कदमों के लिए Shift), क्लिक के लिए Enter या Space, पूर्ववत के लिए Backspace।',
    select:
      'इस आकार वाले सभी खाने चुनें: {shape}|इस रंग के चिह्न वाले सभी खाने चुनें: {colour}|खाने|तीर कुंजियों से खानों के बीच जाएँ, चुनने या हटाने के लिए Space या Enter दबाएँ, फिर सत्यापित करें।|पंक्ति {row}, स्तंभ {column}',
    shape: 'वृत्त|त्रिभुज|वर्ग|पंचभुज|तारा|दिल|तीर|क्रॉस|चाँद',
    colour: 'लाल|नीला|पीला',
    alt: 'पहेली नहीं दिख रही? उसके बिना सत्यापित करें|पहेली के बिना सत्यापन|शुरू हो रहा है…|इसमें लगभग {seconds} सेकंड लगते हैं। कृपया यहीं प्रतीक्षा करें; प्रगति की घोषणा की जाएगी।|{percent} % पूरा|विकल्प अभी उपलब्ध नहीं है। पहेली हल करें या बाद में फिर से प्रयास करें।|पहेली पर वापस जाएँ',
  },
  bg: {
    ui: 'Провери|Нова задача|Отмени|Ето нова задача.|Щракване {n}|Отговорът не беше верен. Опитайте отново с тази задача.',
    slide:
      'Плъзнете парчето в отвора със същата форма|Парче от пъзел|Местете парчето със стрелките (Shift за по-големи стъпки), след това натиснете Enter.',
    click:
      'Щракнете върху тези символи ({count}) по ред:|Изображение за щракане|Местете мерника със стрелките (Shift за по-големи стъпки), Enter или интервал за щракане, Backspace за отмяна.',
    select:
      'Изберете всички квадратчета с тази фигура: {shape}|Изберете всички квадратчета със символ в този цвят: {colour}|Квадратчета|Преминавайте между квадратчетата със стрелките, интервал или Enter за избор или отмяна, след това Провери.|Ред {row}, колона {column}',
    shape: 'кръг|триъгълник|квадрат|петоъгълник|звезда|сърце|стрелка|кръст|луна',
    colour: 'червен|син|жълт',
    alt: 'Не виждате пъзела? Проверка без него|Проверка без пъзела|Стартиране…|Това отнема около {seconds} секунди. Изчакайте тук; напредъкът се обявява.|Готово {percent} %|Алтернативата не е достъпна в момента. Решете пъзела или опитайте по-късно.|Обратно към пъзела',
  },
  sk: {
    ui: 'Overiť|Nová úloha|Späť|Tu je nová úloha.|Kliknutie {n}|Odpoveď nebola správna. Skúste to znova s touto úlohou.',
    slide:
      'Presuňte dielik do otvoru rovnakého tvaru|Dielik skladačky|Posúvajte dielik šípkami (Shift pre väčšie kroky) a potom stlačte Enter.',
    click:
      'Kliknite na tieto symboly ({count}) v tomto poradí:|Obrázok na klikanie|Posúvajte zameriavač šípkami (Shift pre väčšie kroky), Enter alebo medzerník klikne, Backspace vráti späť.',
    select:
      'Vyberte všetky polia s týmto tvarom: {shape}|Vyberte všetky polia so symbolom tejto farby: {colour}|Polia|Medzi poľami sa pohybujte šípkami, medzerníkom alebo Enterom pole vyberte či zrušte, potom zvoľte Overiť.|Riadok {row}, stĺpec {column}',
    shape: 'kruh|trojuholník|štvorec|päťuholník|hviezda|srdce|šípka|kríž|mesiac',
    colour: 'červená|modrá|žltá',
    alt: 'Nevidíte skladačku? Overiť bez nej|Overovanie bez skladačky|Spúšťa sa…|Trvá to asi {seconds} s. Počkajte tu; priebeh sa oznamuje.|Hotovo {percent} %|Alternatíva teraz nie je dostupná. Vyriešte skladačku alebo to skúste neskôr.|Späť na skladačku',
  },
};

/** Flattens one language's table into key → text. */
function flatten(table: Table): Map<string, string> {
  const map = new Map<string, string>();
  for (const [group, keys] of Object.entries(GROUPS) as Array<[keyof Table, readonly string[]]>) {
    const values = table[group].split('|');
    keys.forEach((key, i) => {
      if (values[i] !== undefined) map.set(key, values[i]);
    });
  }
  return map;
}

export type Translate = (key: string, params?: Record<string, string | number>) => string;

/**
 * A translator for one language, falling back to English, then to the key itself. A string parameter is
 * itself a key when `challenge.<name>.<value>` exists (`{shape: 'star'}` shows `challenge.shape.star`).
 */
export function challengeTranslator(lang: string): Translate {
  const own = flatten(STRINGS[lang] ?? (STRINGS.en as Table));
  const en = flatten(STRINGS.en as Table);
  const lookup = (key: string): string | undefined => own.get(key) ?? en.get(key);
  return (key, params = {}) =>
    (lookup(key) ?? key).replace(/\{(\w+)\}/g, (whole, name: string) => {
      const value = params[name];
      if (value === undefined) return whole;
      return typeof value === 'string' ? (lookup(`challenge.${name}.${value}`) ?? value) : String(value);
    });
}

/** For tests: the keys every language must translate. */
export const ALL_KEYS: readonly string[] = Object.values(GROUPS).flat();
