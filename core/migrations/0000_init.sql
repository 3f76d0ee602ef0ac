CREATE TABLE "app_usage" (
	"app_id" text NOT NULL,
	"period" text NOT NULL,
	"challenges" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "app_usage_app_id_period_pk" PRIMARY KEY("app_id","period")
);
--> statement-breakpoint
CREATE TABLE "apps" (
	"id" text PRIMARY KEY NOT NULL,
	"app_key" text NOT NULL,
	"name" text NOT NULL,
	"secret_hash" text NOT NULL,
	"previous_secret_hash" text,
	"previous_secret_expires_at" timestamp with time zone,
	"plan" text DEFAULT 'free' NOT NULL,
	"monthly_quota" integer,
	"overage_allowed" boolean,
	"subscription_expires_at" timestamp with time zone,
	"server_token_required" boolean DEFAULT false NOT NULL,
	"test_mode" boolean DEFAULT false NOT NULL,
	"pass_token_ttl" integer DEFAULT 300 NOT NULL,
	"client_ip_policy" text DEFAULT 'report' NOT NULL,
	"risk_policy" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"allowed_domains" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"disabled_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "apps_app_key_unique" UNIQUE("app_key")
);
--> statement-breakpoint
CREATE TABLE "pass_tokens" (
	"id" text PRIMARY KEY NOT NULL,
	"app_id" text NOT NULL,
	"challenge_id" text NOT NULL,
	"action" text NOT NULL,
	"uid" text,
	"captcha_args" jsonb NOT NULL,
	"issued_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"consumed_at" timestamp with time zone,
	"idempotency_key" text
);
--> statement-breakpoint
CREATE TABLE "server_tokens" (
	"id" text PRIMARY KEY NOT NULL,
	"app_id" text NOT NULL,
	"action" text NOT NULL,
	"max_uses" integer NOT NULL,
	"uses" integer DEFAULT 0 NOT NULL,
	"bind_ip" text,
	"bind_device_id" text,
	"bind_fingerprint" text,
	"bind_uid" text,
	"issued_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "settings" (
	"key" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "pass_tokens_expires_at_idx" ON "pass_tokens" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "server_tokens_expires_at_idx" ON "server_tokens" USING btree ("expires_at");