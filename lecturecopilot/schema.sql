-- Lecture Copilot system of record. Applied idempotently at every service start.
CREATE TABLE IF NOT EXISTS courses (
  id uuid PRIMARY KEY,
  title text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS lectures (
  id uuid PRIMARY KEY,
  course_id uuid NOT NULL REFERENCES courses(id) ON DELETE CASCADE,
  number int NOT NULL,
  title text NOT NULL,
  status text NOT NULL DEFAULT 'queued',      -- queued | processing | ready | failed
  stage text NOT NULL DEFAULT 'queued',       -- queued | transcribing | slides | indexing | ready | failed
  progress real NOT NULL DEFAULT 0,
  error text,
  duration_s double precision,
  media_path text,
  captions_path text,
  web_path text,
  generation int NOT NULL DEFAULT 0,
  media_info jsonb,
  language text,
  transcribed_at timestamptz,
  slides_read_at timestamptz,
  indexed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS lectures_course ON lectures(course_id);

-- Transcript words with times (seconds from the start of the media).
CREATE TABLE IF NOT EXISTS transcript_words (
  lecture_id uuid NOT NULL REFERENCES lectures(id) ON DELETE CASCADE,
  idx int NOT NULL,
  start_s double precision NOT NULL,
  end_s double precision NOT NULL,
  word text NOT NULL,
  PRIMARY KEY (lecture_id, idx)
);

CREATE TABLE IF NOT EXISTS slides (
  lecture_id uuid NOT NULL REFERENCES lectures(id) ON DELETE CASCADE,
  idx int NOT NULL,
  start_s double precision NOT NULL,
  end_s double precision NOT NULL,
  text text NOT NULL,
  PRIMARY KEY (lecture_id, idx)
);

-- Segments: ~60-90 s passages ending on a sentence; the unit of search and sources.
CREATE TABLE IF NOT EXISTS segments (
  id uuid PRIMARY KEY,
  lecture_id uuid NOT NULL REFERENCES lectures(id) ON DELETE CASCADE,
  course_id uuid NOT NULL,
  idx int NOT NULL,
  start_s double precision NOT NULL,
  end_s double precision NOT NULL,
  text text NOT NULL,
  embedding real[] NOT NULL,
  UNIQUE (lecture_id, idx)
);
CREATE INDEX IF NOT EXISTS segments_course ON segments(course_id);

-- Sub-chunks: ~20 s runs of whole sentences inside a segment (finer dense matching).
CREATE TABLE IF NOT EXISTS subchunks (
  lecture_id uuid NOT NULL REFERENCES lectures(id) ON DELETE CASCADE,
  idx int NOT NULL,
  segment_idx int NOT NULL,
  start_s double precision NOT NULL,
  end_s double precision NOT NULL,
  text text NOT NULL,
  embedding real[] NOT NULL,
  PRIMARY KEY (lecture_id, idx)
);

-- Sentences with times: the unit of extractive answers and citations.
CREATE TABLE IF NOT EXISTS sentences (
  lecture_id uuid NOT NULL REFERENCES lectures(id) ON DELETE CASCADE,
  idx int NOT NULL,
  segment_idx int NOT NULL,
  start_s double precision NOT NULL,
  end_s double precision NOT NULL,
  text text NOT NULL,
  embedding real[] NOT NULL,
  PRIMARY KEY (lecture_id, idx)
);
-- 'speech' (from the transcript) or 'slide' (a slide's OCR'd text at the second it appears)
ALTER TABLE sentences ADD COLUMN IF NOT EXISTS kind text NOT NULL DEFAULT 'speech';

-- Idempotency: one row per (consumer, Nats-Msg-Id) whose effect is done.
CREATE TABLE IF NOT EXISTS processed_events (
  consumer text NOT NULL,
  msg_id text NOT NULL,
  done_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (consumer, msg_id)
);

CREATE TABLE IF NOT EXISTS answers (
  id uuid PRIMARY KEY,
  conversation_id uuid NOT NULL,
  course_id uuid NOT NULL REFERENCES courses(id) ON DELETE CASCADE,
  lecture_id uuid,
  question text NOT NULL,
  answer text NOT NULL,
  declined boolean NOT NULL,
  sentences jsonb NOT NULL,
  sources jsonb NOT NULL,
  writer text NOT NULL,
  retrieve_ms double precision,
  total_ms double precision,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS answers_conversation ON answers(conversation_id, created_at);

CREATE TABLE IF NOT EXISTS feedback (
  answer_id uuid NOT NULL REFERENCES answers(id) ON DELETE CASCADE,
  rating text NOT NULL CHECK (rating IN ('up', 'down')),
  comment text,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS api_tokens (
  token_sha256 text PRIMARY KEY,
  role text NOT NULL CHECK (role IN ('admin', 'instructor', 'student')),
  email text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
-- a token minted before expiry existed (NULL) never expires; mint-token sets one (default 90 days)
ALTER TABLE api_tokens ADD COLUMN IF NOT EXISTS expires_at timestamptz;
CREATE INDEX IF NOT EXISTS api_tokens_email ON api_tokens (email);

-- added with grounded answers
ALTER TABLE answers ADD COLUMN IF NOT EXISTS rewritten_question text;
ALTER TABLE answers ADD COLUMN IF NOT EXISTS reason text;
-- who owns a course (the instructor notified when its lectures are ready or fail)
ALTER TABLE courses ADD COLUMN IF NOT EXISTS owner_email text;

-- Chapters: topic stretches of a lecture with an extractive title and summary bullets.
CREATE TABLE IF NOT EXISTS chapters (
  lecture_id uuid NOT NULL REFERENCES lectures(id) ON DELETE CASCADE,
  idx int NOT NULL,
  start_s double precision NOT NULL,
  end_s double precision NOT NULL,
  title text NOT NULL,
  bullets jsonb NOT NULL,
  bullet_embeddings jsonb NOT NULL,
  PRIMARY KEY (lecture_id, idx)
);

-- Resumable uploads (Content-Range chunks): the bytes live in <media>/uploads/<id>.part until complete.
CREATE TABLE IF NOT EXISTS uploads (
  id uuid PRIMARY KEY,
  course_id uuid NOT NULL REFERENCES courses(id) ON DELETE CASCADE,
  filename text NOT NULL,
  size bigint NOT NULL,
  meta jsonb,
  state text NOT NULL DEFAULT 'receiving',   -- receiving | finishing | queued | refused | expired | cancelled
  lecture_id uuid,
  error text,
  created_at timestamptz NOT NULL DEFAULT now()
);
-- who started it (per-person cap) and when a chunk last arrived (idle expiry, LC_UPLOAD_IDLE_S)
ALTER TABLE uploads ADD COLUMN IF NOT EXISTS owner text;
ALTER TABLE uploads ADD COLUMN IF NOT EXISTS active_at timestamptz NOT NULL DEFAULT now();
CREATE INDEX IF NOT EXISTS uploads_state ON uploads (state, active_at);

-- web product: accounts, sessions, sign-in links, role requests, course visibility, rate limits
CREATE TABLE IF NOT EXISTS users (
  email text PRIMARY KEY,
  role text NOT NULL DEFAULT 'student' CHECK (role IN ('admin', 'instructor', 'student')),
  created_at timestamptz NOT NULL DEFAULT now()
);
-- single-use sign-in links; only the SHA-256 of the token is kept
CREATE TABLE IF NOT EXISTS login_tokens (
  token_sha256 text PRIMARY KEY,
  email text NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
-- browser sessions; the cookie (signed by Flask) holds the random id, the row its SHA-256
CREATE TABLE IF NOT EXISTS web_sessions (
  id_sha256 text PRIMARY KEY,
  email text NOT NULL REFERENCES users(email) ON DELETE CASCADE,
  csrf_token text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS role_requests (
  id uuid PRIMARY KEY,
  email text NOT NULL REFERENCES users(email) ON DELETE CASCADE,
  role text NOT NULL DEFAULT 'instructor',
  reason text,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied')),
  decided_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  decided_at timestamptz
);
CREATE UNIQUE INDEX IF NOT EXISTS role_requests_one_pending ON role_requests(email) WHERE status = 'pending';
ALTER TABLE courses ADD COLUMN IF NOT EXISTS visibility text NOT NULL DEFAULT 'public';
CREATE TABLE IF NOT EXISTS course_members (
  course_id uuid NOT NULL REFERENCES courses(id) ON DELETE CASCADE,
  email text NOT NULL,
  PRIMARY KEY (course_id, email)
);
-- fixed-window counters: key = what is limited + a keyed hash (HMAC) of the person; never a raw IP
CREATE TABLE IF NOT EXISTS rate_counters (
  key text NOT NULL,
  window_start timestamptz NOT NULL,
  n int NOT NULL,
  PRIMARY KEY (key, window_start)
);

-- Exam prep: multiple-choice practice questions per lecture (4 options, one correct), each cited
-- at the second its explaining sentence starts. method: extractive | the model's name.
CREATE TABLE IF NOT EXISTS quiz_questions (
  id uuid PRIMARY KEY,
  course_id uuid NOT NULL REFERENCES courses(id) ON DELETE CASCADE,
  lecture_id uuid NOT NULL REFERENCES lectures(id) ON DELETE CASCADE,
  stem text NOT NULL,
  options jsonb NOT NULL,
  answer_index int NOT NULL CHECK (answer_index BETWEEN 0 AND 3),
  explanation text NOT NULL,
  cite_lecture_id uuid NOT NULL REFERENCES lectures(id) ON DELETE CASCADE,
  cite_t_s double precision NOT NULL,
  method text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS quiz_questions_lecture ON quiz_questions(lecture_id);
CREATE TABLE IF NOT EXISTS quiz_reports (
  question_id uuid NOT NULL REFERENCES quiz_questions(id) ON DELETE CASCADE,
  comment text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS quiz_attempts (
  question_id uuid NOT NULL REFERENCES quiz_questions(id) ON DELETE CASCADE,
  chosen_index int NOT NULL,
  correct boolean NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
-- one row per generation of a lecture's set (regeneration: at most one per lecture every 5 minutes)
CREATE TABLE IF NOT EXISTS quiz_generations (
  lecture_id uuid NOT NULL REFERENCES lectures(id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS quiz_generations_lecture ON quiz_generations(lecture_id, created_at);
-- a set written on a student's "quiz me" (the lecture had none): not counted in the instructor's 5-minute window
ALTER TABLE quiz_generations ADD COLUMN IF NOT EXISTS automatic boolean NOT NULL DEFAULT false;
-- assessment mode: answers to pasted graded items explain the concept without naming an option
ALTER TABLE courses ADD COLUMN IF NOT EXISTS assessment_mode boolean NOT NULL DEFAULT false;
-- checkpoints while watching (issue 33): at each chapter's end the player offers one practice question
ALTER TABLE courses ADD COLUMN IF NOT EXISTS checkpoints boolean NOT NULL DEFAULT false;
-- an attempt given at such a checkpoint (counted per checkpoint in the course's insights)
ALTER TABLE quiz_attempts ADD COLUMN IF NOT EXISTS checkpoint boolean NOT NULL DEFAULT false;
-- who answered, as the gateway's keyed hash (HMAC, as answers.asker): the statistics count each person once.
-- Attempts stored before this column have none: each counts on its own.
ALTER TABLE quiz_attempts ADD COLUMN IF NOT EXISTS person text;
-- insights: who asked, as the keyed hash (HMAC) used for rate limits; never an email or IP
ALTER TABLE answers ADD COLUMN IF NOT EXISTS asker text;
-- asked by the course's instructor or an admin: not counted as a student in insights
ALTER TABLE answers ADD COLUMN IF NOT EXISTS staff boolean NOT NULL DEFAULT false;
CREATE INDEX IF NOT EXISTS answers_course_time ON answers(course_id, created_at);
-- feedback: one rating per person per answer (the latest replaces it); the person is the keyed hash
-- (HMAC) of the rate limits. Ratings stored before this column have no rater: each stays on its own.
ALTER TABLE feedback ADD COLUMN IF NOT EXISTS rater text;
CREATE UNIQUE INDEX IF NOT EXISTS feedback_one_per_rater ON feedback(answer_id, rater);
-- a lecture number is used once per course (citations name lectures by number: "L13 · 4:05"). A
-- database from before this index may hold duplicates: the first lecture of each (course, number), by
-- created_at then id, keeps it; the later ones get the course's next free numbers above its highest,
-- in (number, created_at, id) order. Done once, with writes to lectures held off meanwhile.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_indexes WHERE tablename = 'lectures' AND indexname = 'lectures_course_number') THEN
    LOCK TABLE lectures IN SHARE ROW EXCLUSIVE MODE;
    WITH ranked AS (
      SELECT id, course_id, number, created_at,
             row_number() OVER (PARTITION BY course_id, number ORDER BY created_at, id) AS nth
      FROM lectures),
    later AS (
      SELECT id, course_id, row_number() OVER (PARTITION BY course_id ORDER BY number, created_at, id) AS k
      FROM ranked WHERE nth > 1),
    top AS (SELECT course_id, max(number) AS highest FROM lectures GROUP BY course_id)
    UPDATE lectures l SET number = top.highest + later.k, updated_at = now()
    FROM later JOIN top USING (course_id) WHERE l.id = later.id;
    CREATE UNIQUE INDEX lectures_course_number ON lectures(course_id, number);
  END IF;
END $$;
-- pgvector where the server has it (lecturecopilot/vectors.py): the embedding columns become
-- vector(384) (all-MiniLM-L6-v2's dimension, lecturecopilot/models.py EMBED_DIM). A real[] column
-- of a table with no rows yet is converted here; one of a table with rows is left as it is (both
-- work, lecturecopilot/vectors.py): rewriting a large table under an exclusive lock while a service
-- starts would hold every other service at the schema lock, so `lecture-copilot migrate-vectors`
-- converts those, a table at a time. Without the extension, or without the right to create it, the
-- columns stay real[]. chapters.bullet_embeddings stays jsonb: a list of vectors per chapter, read
-- whole, never compared in SQL.
DO $$
DECLARE
  col record;
  has_rows boolean;
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
    BEGIN
      CREATE EXTENSION IF NOT EXISTS vector;
    EXCEPTION WHEN insufficient_privilege THEN
      RAISE NOTICE 'pgvector is installed but this role may not create the extension: embeddings stay real[]';
    END;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') THEN
    FOR col IN
      SELECT c.relname AS tab, a.attname AS name
      FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
      WHERE c.relname IN ('segments', 'sentences', 'subchunks') AND a.attname = 'embedding'
        AND c.relnamespace = current_schema()::regnamespace AND NOT a.attisdropped
        AND format_type(a.atttypid, a.atttypmod) = 'real[]'
    LOOP
      EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I)', col.tab) INTO has_rows;
      IF has_rows THEN
        RAISE NOTICE '%.% stays real[] (the table has rows): lecture-copilot migrate-vectors converts it', col.tab, col.name;
      ELSE
        EXECUTE format('ALTER TABLE %I ALTER COLUMN %I TYPE vector(384) USING %I::vector(384)',
                       col.tab, col.name, col.name);
      END IF;
    END LOOP;
  END IF;
END $$;
-- Notes: a person's private notes pinned to a moment of a lecture (t_s seconds from its start). Keyed
-- to the lecture's id, not its number (a renumber keeps them); removed with the lecture (and so its
-- course) or the account (users). Written and read only by the gateway (services/gateway/notes_store.py).
CREATE TABLE IF NOT EXISTS notes (
  id uuid PRIMARY KEY,
  email text NOT NULL REFERENCES users(email) ON DELETE CASCADE,
  lecture_id uuid NOT NULL REFERENCES lectures(id) ON DELETE CASCADE,
  t_s double precision NOT NULL CHECK (t_s >= 0),
  text text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS notes_lecture ON notes(lecture_id, email, t_s);
CREATE INDEX IF NOT EXISTS notes_email ON notes(email);
